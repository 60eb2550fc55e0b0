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
# reads shared with other text events: the client read slower than the server wrote.
SATURATED_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class ItlStats:
    """Inter-token latency in ms (docs/design.md §4): each text event of a network read is given
    the time since the previous text-carrying read, divided by the read's text events. p99 and max
    are None for a saturated stream: the tail of its gaps was spent waiting in the socket buffer
    and cannot be known, so it is withheld rather than guessed."""

    p50_ms: float
    p90_ms: float
    p99_ms: float | None
    max_ms: float | None


@dataclass(frozen=True, slots=True)
class Reads:
    """How a stream's text-carrying events arrived, read by read.

    itl: the gaps' statistics, None when no gap could be attributed (one read). coalesced_events:
    text events that shared their network read with another text event. text_reads: network
    reads that carried text. saturated: more than SATURATED_SHARE of the events were coalesced.
    """

    itl: ItlStats | None
    coalesced_events: int
    text_reads: int
    saturated: bool


def read_stats(token_event_ns: Sequence[int]) -> Reads:
    """Gaps and coalescing of text-carrying events (perf_counter ns stamps, in order).

    Every event decoded from one network read carries that read's stamp, so events sharing a
    stamp arrived in one read. A read of k events that came g ms after the previous text read
    stands for k gaps of g / k ms: the events waited in the socket buffer while the client was
    away, so the time since the last read is spread over the tokens it brought (the gaps sum to
    the stream's span, as decode speed's window does). Taking gaps only between events that
    arrived alone would keep the short gaps and drop the long ones, which are the ones a burst
    follows: under load that read p99 20–71 % low (bench/accuracy.py --saturated). The events of
    the first read have no previous read to share a gap with and give none.
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
    saturated = n > 1 and coalesced > SATURATED_SHARE * n
    gaps = sorted(
        (stamps[j] - stamps[j - 1]) / NS_PER_MS / sizes[j]
        for j in range(1, len(sizes))
        for _ in range(sizes[j])
    )
    itl = None
    if gaps:
        itl = ItlStats(
            p50_ms=percentile(gaps, 50),
            p90_ms=percentile(gaps, 90),
            p99_ms=None if saturated else percentile(gaps, 99),
            max_ms=None if saturated else gaps[-1],
        )
    return Reads(itl, coalesced, len(sizes), saturated)


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
