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


@dataclass(frozen=True, slots=True)
class ItlStats:
    """Inter-token latency: gaps between consecutive text-carrying events, in ms."""

    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float


def itl_stats(token_event_ns: Sequence[int]) -> ItlStats | None:
    """Gaps between consecutive text-carrying events (perf_counter ns stamps, in order).

    The first event has no predecessor, so n events give n − 1 gaps; None when fewer than two.
    Events decoded from the same network read share a stamp and give a gap of 0: they did
    arrive together.
    """
    if len(token_event_ns) < 2:
        return None
    gaps = sorted(
        (later - earlier) / NS_PER_MS
        for earlier, later in zip(token_event_ns, token_event_ns[1:], strict=False)
    )
    return ItlStats(
        p50_ms=percentile(gaps, 50),
        p90_ms=percentile(gaps, 90),
        p99_ms=percentile(gaps, 99),
        max_ms=gaps[-1],
    )


def decode_token_count(
    output_tokens: int, reasoning_tokens: int | None, *, reasoning_streamed: bool
) -> int:
    """Tokens generated inside the window ttft → end of stream (docs/design.md §4, decode_tps).

    Reasoning a provider reported but did not stream (hidden reasoning) was generated before the
    first visible token, so it is left out of the window.
    """
    if reasoning_tokens and not reasoning_streamed:
        return max(output_tokens - reasoning_tokens, 0)
    return output_tokens


def decode_tps(tokens: int, *, ttft_ms: float, total_ms: float) -> float | None:
    """tokens / ((total_ms − ttft_ms) / 1000): tokens per second after the first token."""
    window_ms = total_ms - ttft_ms
    if tokens <= 0 or window_ms <= 0:
        return None
    return tokens / (window_ms / 1000)


def tpot_ms(tokens: int, *, ttft_ms: float, last_token_ms: float) -> float | None:
    """(last_token_ms − ttft_ms) / (tokens − 1): time per output token after the first, in ms."""
    if tokens < 2 or last_token_ms < ttft_ms:
        return None
    return (last_token_ms - ttft_ms) / (tokens - 1)
