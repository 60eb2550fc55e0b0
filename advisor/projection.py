"""Projection: one endpoint's task time for a workload shape, from its measured runs.

Per call (DESIGN.md §1): TTFT at the shape's prefilled tokens + (reasoning + output tokens) ÷
decode speed at the shape's concurrency + tool time. Each base run (no padding, one user) is
one measured condition; per condition:

- TTFT = the run's median TTFT + prefill cost × (prefilled tokens − base prompt tokens), the
  prefill cost per token measured as (TTFT long − TTFT base) ÷ (tokens long − tokens base) at
  the same slot (the window's median pair when that slot has no long run). Never below the
  base prompt; past the longest measured prompt the line is extended and the note says so.
- concurrency c > 1 scales TTFT and decode speed by the ratio of the medians at c to those at
  one user (concurrency runs), interpolated in log c between measured concurrencies.
- spread within the run: σ(TTFT) = (p90 − p50) ÷ z90 scaled with TTFT; σ(decode time) =
  tokens ÷ p10 speed − tokens ÷ p50 speed, ÷ z90.

A task = `calls` serial calls: mean × calls, variance × calls. Task quantiles are those of the
mixture over conditions (advisor.mixture), each condition weighted by its recency (half-life
HALF_LIFE_DAYS before the newest run): providers drift and regress, and the next day looks more
like the last few days than like two weeks ago.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from statistics import NormalDist

from .measures import RunPoint
from .mixture import quantiles
from .shape import Shape

Z90 = NormalDist().inv_cdf(0.9)
BASE_PROMPT_TOKENS = 150  # the standard prompt when a run has no token count
# Extra prompt tokens treated as the base measurement without a long-context run: prefill of
# 2,000 tokens is tens of ms on any served model; the note still says it was not measured.
LONG_SLACK_TOKENS = 2_000
HALF_LIFE_DAYS = 3.0
MIN_RUNS = 6  # conditions (base runs) below which an answer is thin: two days at 3 a day
MISSING_LONG = "long-context"
MISSING_CONCURRENCY = "concurrency"


@dataclass(slots=True)
class Projection:
    endpoint_id: int
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    task_p25_s: float | None = None
    task_p50_s: float | None = None
    task_p75_s: float | None = None
    task_p90_s: float | None = None
    ttft_ms: float | None = None  # median per-call TTFT at this shape
    decode_tps: float | None = None  # median per-user decode speed at this concurrency
    reasoning_s: float | None = None  # per call: hidden reasoning tokens ÷ decode speed
    conditions: int = 0
    runs: int = 0
    samples: int = 0
    availability: float | None = None
    newest: datetime | None = None
    p50_by_bucket: dict[int, float] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return not self.missing and self.task_p50_s is not None

    @property
    def thin(self) -> bool:
        return self.conditions < MIN_RUNS


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _tokens(point: RunPoint, fallback: float) -> float:
    return float(point.input_tokens) if point.input_tokens else fallback


def prefill_rates(base: list[RunPoint], long: list[RunPoint]) -> tuple[dict, float | None, float]:
    """({slot: ms per prompt token}, the median rate, the longest measured prompt in tokens)."""
    base_at = {p.slot: p for p in base}
    base_in = _median([_tokens(p, BASE_PROMPT_TOKENS) for p in base]) or BASE_PROMPT_TOKENS
    by_slot: dict[datetime, float] = {}
    for point in long:
        pair = base_at.get(point.slot)
        if pair is None:
            continue
        pair_in = _tokens(pair, base_in)
        extra = _tokens(point, point.context_tokens + pair_in) - pair_in
        if extra > 0:
            by_slot[point.slot] = max(0.0, (point.ttft_p50_ms - pair.ttft_p50_ms) / extra)
    longest = max((_tokens(p, p.context_tokens + base_in) for p in long), default=base_in)
    if by_slot:
        return by_slot, statistics.median(by_slot.values()), longest
    if long and base:
        long_in = _median([_tokens(p, p.context_tokens + base_in) for p in long])
        gap = _median([p.ttft_p50_ms for p in long]) - _median([p.ttft_p50_ms for p in base])
        return {}, max(0.0, gap / max(long_in - base_in, 1.0)), longest
    return {}, None, longest


def concurrency_factors(
    base: list[RunPoint], parallel: list[RunPoint], users: int
) -> tuple[float, float, str | None]:
    """(TTFT factor, decode factor, note) at `users` concurrent, relative to one user."""
    if users <= 1:
        return 1.0, 1.0, None
    one_ttft = _median([p.ttft_p50_ms for p in base])
    one_decode = _median([p.decode_tps_p50 for p in base])
    levels: dict[int, list[RunPoint]] = {}
    for point in parallel:
        levels.setdefault(point.concurrency, []).append(point)
    curve = [(1, 1.0, 1.0)] + [
        (
            level,
            _median([p.ttft_p50_ms for p in points]) / one_ttft,
            _median([p.decode_tps_p50 for p in points]) / one_decode,
        )
        for level, points in sorted(levels.items())
    ]
    for (c0, t0, d0), (c1, t1, d1) in zip(curve, curve[1:], strict=False):
        if c0 <= users <= c1:
            weight = math.log(users / c0) / math.log(c1 / c0)
            return t0 + (t1 - t0) * weight, d0 + (d1 - d0) * weight, None
    top, ttft_f, decode_f = curve[-1]
    note = f"speed at {users} users taken as at {top}, the most measured (not extrapolated)"
    return ttft_f, decode_f, note


def project(endpoint_id: int, points: list[RunPoint], shape: Shape) -> Projection:
    """The task-time distribution of `shape` on one endpoint (see the module docstring)."""
    result = Projection(endpoint_id=endpoint_id, runs=len(points))
    result.samples = sum(p.ok + p.errors for p in points)
    attempts = sum(p.ok + p.errors for p in points)
    result.availability = sum(p.ok for p in points) / attempts if attempts else None
    result.newest = max((p.slot for p in points), default=None)
    usable = [p for p in points if p.ok and p.ttft_p50_ms is not None and p.decode_tps_p50]
    base = [p for p in usable if p.base]
    long = [p for p in usable if p.long]
    parallel = [p for p in usable if p.parallel]
    if not base:
        result.missing.append("base")
        return result
    rates, median_rate, longest = prefill_rates(base, long)
    base_in = _median([_tokens(p, BASE_PROMPT_TOKENS) for p in base])
    prefilled = shape.prefilled_tokens
    if prefilled > base_in + LONG_SLACK_TOKENS and median_rate is None:
        result.missing.append(MISSING_LONG)
    elif prefilled > longest:
        result.notes.append(
            f"TTFT extrapolated: {prefilled:,.0f} prompt tokens is past the {longest:,.0f} measured"
        )
    elif prefilled > base_in and median_rate is None:
        result.notes.append(
            f"TTFT as measured at {base_in:,.0f} prompt tokens; {prefilled:,.0f} not measured"
        )
    if shape.concurrency > 1 and not parallel:
        result.missing.append(MISSING_CONCURRENCY)
    if result.missing:
        return result
    ttft_f, decode_f, note = concurrency_factors(base, parallel, shape.concurrency)
    if note:
        result.notes.append(note)
    means, sds, ttfts, speeds, buckets, weights = [], [], [], [], [], []
    newest = max(p.slot for p in base)
    for point in base:
        age_days = (newest - point.slot).total_seconds() / 86_400
        weights.append(0.5 ** (age_days / HALF_LIFE_DAYS))
        rate = rates.get(point.slot, median_rate) or 0.0
        extra_ms = rate * max(0.0, prefilled - _tokens(point, base_in))
        ttft = (point.ttft_p50_ms + extra_ms) * ttft_f
        ttft_sd = 0.0
        if point.ttft_p90_ms is not None:
            scale = ttft / (point.ttft_p50_ms * ttft_f) if point.ttft_p50_ms else 1.0
            ttft_sd = max(0.0, point.ttft_p90_ms - point.ttft_p50_ms) / Z90 * ttft_f * scale
        decode = point.decode_tps_p50 * decode_f
        decode_s = shape.decoded_tokens / decode
        decode_sd = 0.0
        if point.decode_tps_p10:
            slow_s = shape.decoded_tokens / (point.decode_tps_p10 * decode_f)
            decode_sd = max(0.0, slow_s - decode_s) / Z90
        call_s = ttft / 1000 + decode_s + shape.tool_s
        call_sd = math.hypot(ttft_sd / 1000, decode_sd)
        means.append(shape.calls * call_s)
        sds.append(math.sqrt(shape.calls) * call_sd)
        ttfts.append(ttft)
        speeds.append(decode)
        buckets.append(point.tod_bucket)
    result.conditions = len(means)
    p25, p50, p75, p90 = quantiles(means, sds, (0.25, 0.5, 0.75, 0.9), weights)
    result.task_p25_s, result.task_p50_s, result.task_p75_s, result.task_p90_s = p25, p50, p75, p90
    result.ttft_ms = statistics.median(ttfts)
    result.decode_tps = statistics.median(speeds)
    result.reasoning_s = shape.reasoning_tokens / result.decode_tps
    for bucket in sorted(set(buckets)):
        chosen = [i for i, b in enumerate(buckets) if b == bucket]
        (median,) = quantiles(
            [means[i] for i in chosen],
            [sds[i] for i in chosen],
            (0.5,),
            [weights[i] for i in chosen],
        )
        result.p50_by_bucket[bucket] = median
    return result


def cost_per_task(
    shape: Shape,
    *,
    price_in: float | None,
    price_out: float | None,
    price_cached: float | None,
) -> float | None:
    """USD per task at list prices (USD per 1M tokens): every call sends its whole input (the
    cached share at the cached price, or the input price where none is listed) and pays for
    reasoning and output tokens at the output price. None without both list prices."""
    if price_in is None or price_out is None:
        return None
    cached = shape.input_tokens * shape.cached_share
    per_call = (
        (shape.input_tokens - cached) * price_in
        + cached * (price_in if price_cached is None else price_cached)
        + shape.decoded_tokens * price_out
    ) / 1_000_000
    return shape.calls * per_call
