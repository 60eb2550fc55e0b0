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
# reads shared with other text events: the client read slower than the server wrote, so its
# inter-token gaps come from the few events that still arrived alone.
SATURATED_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class ItlStats:
    """Inter-token latency: measured gaps between consecutive text-carrying events, in ms."""

    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float


@dataclass(frozen=True, slots=True)
class Reads:
    """How a stream's text-carrying events arrived, read by read.

    itl: statistics of the measured gaps, None when no gap could be measured. coalesced_events:
    text events that shared their network read with another text event (they carry one stamp
    between them, so no gap between them was measured). text_reads: network reads that carried
    text. saturated: more than SATURATED_SHARE of the events were coalesced.
    """

    itl: ItlStats | None
    coalesced_events: int
    text_reads: int
    saturated: bool


def read_stats(token_event_ns: Sequence[int]) -> Reads:
    """Gaps and coalescing of text-carrying events (perf_counter ns stamps, in order).

    Every event decoded from one network read carries that read's stamp, so events sharing a
    stamp arrived in one read. A gap is measured only between two consecutive events that each
    arrived in a read of its own: an event that shared its read may have waited in the socket
    buffer, and a gap of 0 between events of one read was never measured.
    """
    n = len(token_event_ns)
    alone = [True] * n
    reads = 0
    for i in range(n):
        if i and token_event_ns[i] == token_event_ns[i - 1]:
            alone[i] = alone[i - 1] = False
        else:
            reads += 1
    gaps = sorted(
        (token_event_ns[i] - token_event_ns[i - 1]) / NS_PER_MS
        for i in range(1, n)
        if alone[i] and alone[i - 1]
    )
    coalesced = n - sum(alone)
    itl = None
    if gaps:
        itl = ItlStats(
            p50_ms=percentile(gaps, 50),
            p90_ms=percentile(gaps, 90),
            p99_ms=percentile(gaps, 99),
            max_ms=gaps[-1],
        )
    return Reads(itl, coalesced, reads, n > 1 and coalesced > SATURATED_SHARE * n)


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
