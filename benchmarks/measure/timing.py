"""The arithmetic of docs/design.md §4: percentiles, inter-token gaps, decode speed, time per token.

Pure functions of numbers already measured; nothing here reads a clock. Times are milliseconds
measured from t0 unless a name says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) of ascending values, linear between closest ranks."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    position = (len(sorted_values) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    fraction = position - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


NS_PER_MS = 1_000_000


# A stream is flagged saturated when more than this share of its text events arrived in network
# reads shared with other text events (the client read slower than the server wrote), or when
# bursts leave its median gap unknown.
SATURATED_SHARE = 0.5

# An ITL figure is reported only when it is known to within this share: when it moves by no
# more than this whether each burst's silence is spread evenly over its events or given to one
# gap (its events sent back to back). Between those two attributions lies what the server did;
# bench/accuracy.py --saturated measured every figure so reported within 5 % of the server's own.
ITL_KNOWN_WITHIN = 0.05

# What a withheld figure says (Measurement.itl_withheld): "" when every figure is reported.
WITHHELD_ALL = "all"  # p50 and above unknown: bursts hide the median (the stream is saturated)
WITHHELD_TAIL = "tail"  # p50 known, but a burst may hide a long gap: max (and p99, or p90 up)


@dataclass(frozen=True, slots=True)
class ItlStats:
    """Inter-token latency in ms (docs/design.md §4): each text event of a network read is given
    the time since the previous text-carrying read, divided by the read's text events. A figure
    that bursts leave unknown (ITL_KNOWN_WITHIN) is None, and `withheld` says which: "all"
    (p50 and everything above it) or "tail" (max, and p99 or p90 and above when they too are
    unknown), "" when none was."""

    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    withheld: str = ""


@dataclass(frozen=True, slots=True)
class Reads:
    """How a stream's text-carrying events arrived, read by read.

    itl: the gaps' statistics, None when no gap could be attributed (one read). coalesced_events:
    text events that shared their network read with another text event. text_reads: network
    reads that carried text. saturated: more than SATURATED_SHARE of the events were coalesced,
    or so many that not even the median gap is known (the client read slower than the server
    wrote).
    """

    itl: ItlStats | None
    coalesced_events: int
    text_reads: int
    saturated: bool


def read_stats(token_event_ns: Sequence[int]) -> Reads:
    """Gaps and coalescing of text-carrying events (perf_counter ns stamps, in order).

    Every event decoded from one network read carries that read's stamp, so events sharing a
    stamp arrived in one read. A read of k events that came g ms after the previous text read
    stands for k gaps summing to g: the events waited in the socket buffer while the client was
    away (or the server sent them together), and how g split between them cannot be known. The
    figures are taken with g spread evenly (k gaps of g / k, so the gaps sum to the stream's
    span as decode speed's window does) and checked against g given to one gap (one of g and
    k − 1 of 0): a figure the two put more than ITL_KNOWN_WITHIN apart is withheld (None). Past
    half the events coalesced that takes the median; a single burst after a long silence can
    take the tail. The events of the first read have no previous read to share a gap with.
    """
    n = len(token_event_ns)
    sizes: list[int] = []  # text events per read, in order
    stamps: list[int] = []
    for i, stamp in enumerate(token_event_ns):
        if i and stamp == token_event_ns[i - 1]:
            sizes[-1] += 1
        else:
            sizes.append(1)
            stamps.append(stamp)
    coalesced = sum(size for size in sizes if size > 1)
    silences = [(stamps[j] - stamps[j - 1]) / NS_PER_MS for j in range(1, len(sizes))]
    spread = sorted(g / k for g, k in zip(silences, sizes[1:], strict=True) for _ in range(k))
    itl = None
    if spread:
        back_to_back = sorted([*silences, *[0.0] * (len(spread) - len(silences))])
        itl = _itl(spread, back_to_back)
    lost_median = itl is not None and itl.withheld == WITHHELD_ALL
    saturated = n > 1 and (coalesced > SATURATED_SHARE * n or lost_median)
    return Reads(itl, coalesced, len(sizes), saturated)


def _itl(spread: list[float], back_to_back: list[float]) -> ItlStats:
    """The figures of the evenly spread gaps, each withheld unless the back-to-back attribution
    agrees with it; a withheld figure takes those above it along (an unknown median leaves no
    known tail)."""
    figures = {
        "p50": percentile(spread, 50),
        "p90": percentile(spread, 90),
        "p99": percentile(spread, 99),
        "max": spread[-1],
    }
    other = {
        "p50": percentile(back_to_back, 50),
        "p90": percentile(back_to_back, 90),
        "p99": percentile(back_to_back, 99),
        "max": back_to_back[-1],
    }
    known: dict[str, float | None] = {}
    lost = False
    for name, value in figures.items():
        lost = lost or abs(other[name] - value) > ITL_KNOWN_WITHIN * value
        known[name] = None if lost else value
    withheld = WITHHELD_ALL if known["p50"] is None else WITHHELD_TAIL if lost else ""
    return ItlStats(known["p50"], known["p90"], known["p99"], known["max"], withheld)


def decode_tps(tokens: int, *, start_ms: float, last_token_ms: float) -> float | None:
    """(tokens − 1) / ((last_token_ms − start_ms) / 1000) = 1000 / tpot_ms.

    The first token opens the window, so `tokens` tokens span tokens − 1 gaps (as every peer and
    every server counts). start_ms is ttft_ms, or ttfa_ms when reasoning was hidden or
    summarised and `tokens` counts answer tokens only (docs/design.md §4).
    """
    window_ms = last_token_ms - start_ms
    if tokens < 2 or window_ms <= 0:
        return None
    return (tokens - 1) / (window_ms / 1000)


def tpot_ms(tokens: int, *, start_ms: float, last_token_ms: float) -> float | None:
    """(last_token_ms − start_ms) / (tokens − 1): time per output token after the first, in ms."""
    if tokens < 2 or last_token_ms <= start_ms:
        return None
    return (last_token_ms - start_ms) / (tokens - 1)
