"""Projection: one endpoint's task time for a workload shape, from its measured runs.

Per call (docs/design.md §1, benchmarks.task_time, the agent-loop page's formula): TTFT at the
shape's prefilled tokens + (reasoning + output tokens) ÷ decode speed at the shape's concurrency +
tool time. Each base run (no padding, one user) is
one measured condition; per condition:

- TTFT = the run's median TTFT + prefill cost × (prefilled tokens − base prompt tokens), the
  prefill cost per token measured as (TTFT long − TTFT base) ÷ (tokens long − tokens base) at
  the same slot (the window's median pair when that slot has no long run). Never below the
  base prompt; past the longest measured prompt the line is extended and the note says so.
  Without a long-context run a prompt more than LONG_SLACK_TOKENS past the base prompt is not
  measured (`missing` long-context: the advisor offers to queue that run), never a guess.
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from statistics import NormalDist

import numpy as np

from .measures import (
    BUCKET,
    CONTEXT,
    DECODE10,
    DECODE50,
    ERRORS,
    OK,
    SATURATED,
    SLOT,
    TOKENS,
    TTFT50,
    TTFT90,
    USERS,
    RunPoint,
    as_rows,
)
from .mixture import many_quantiles
from .shape import Shape, task_seconds

Z90 = NormalDist().inv_cdf(0.9)
BASE_PROMPT_TOKENS = 150  # the standard prompt when a run has no token count
# Extra prompt tokens treated as the base measurement without a long-context run (the note says
# so). Prefill is not cheap everywhere: ~0.19 ms a token on GPU-class serving, 380 ms for 2,000
# tokens, 5 % of a 10-call task. Past this slack a shape is "not measured" until a long-context
# run gives the endpoint's own prefill cost; 256 tokens cost such an endpoint ~50 ms a call.
LONG_SLACK_TOKENS = 256
HALF_LIFE_DAYS = 3.0
MIN_RUNS = 6  # conditions (base runs) below which an answer is thin: two days at 3 a day
MISSING_LONG = "long-context"
MISSING_CONCURRENCY = "concurrency"
TASK_FRACTIONS = (0.25, 0.5, 0.75, 0.9)


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
    input_tokens: float | None = None  # per call, measured (advice on a custom workload only)
    conditions: int = 0
    runs: int = 0
    saturated_runs: int = 0  # runs whose client was saturated (docs/design.md §4): marked
    samples: int = 0
    availability: float | None = None
    newest: datetime | None = None
    p50_by_bucket: dict[int, float] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return not self.missing and self.task_p90_s is not None

    @property
    def thin(self) -> bool:
        return self.conditions < MIN_RUNS


@dataclass(slots=True)
class Conditions:
    """One endpoint's task time under each base run: mean, sd, recency weight, tod bucket."""

    means: np.ndarray
    sds: np.ndarray
    weights: np.ndarray
    buckets: np.ndarray


def _present(values: np.ndarray) -> np.ndarray:
    """Where a figure is there and truthy (not NaN, not 0): the test `if value` makes."""
    return ~np.isnan(values) & (values != 0)


def _tokens(rows: np.ndarray, fallback: np.ndarray | float) -> np.ndarray:
    """Prompt tokens of each run: its own count, else the fallback."""
    tokens = rows[:, TOKENS]
    return np.where(_present(tokens), tokens, fallback)


def _last_per_slot(slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct slots ascending, index of the last row at each): a later run at the same slot
    stands for it."""
    reversed_unique, first_from_end = np.unique(slots[::-1], return_index=True)
    return reversed_unique, len(slots) - 1 - first_from_end


def prefill_rates(
    base: np.ndarray, long: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float | None, float]:
    """(slots, ms per prompt token at each, the median rate, the longest measured prompt in
    tokens): a rate per slot where a long-context run has a base run beside it."""
    base_in = float(np.median(_tokens(base, BASE_PROMPT_TOKENS))) if len(base) else 0.0
    base_in = base_in or BASE_PROMPT_TOKENS
    longest = float(np.max(_tokens(long, long[:, CONTEXT] + base_in))) if len(long) else base_in
    none = np.empty(0)
    if not len(long):
        return none, none, None, longest
    base_slots, base_last = _last_per_slot(base[:, SLOT])
    at = np.minimum(np.searchsorted(base_slots, long[:, SLOT]), max(len(base_slots) - 1, 0))
    paired = long[:, SLOT] == base_slots[at] if len(base_slots) else np.zeros(len(long), bool)
    pair = base[base_last[at[paired]]]
    pair_in = _tokens(pair, base_in)
    extra = _tokens(long[paired], long[paired][:, CONTEXT] + pair_in) - pair_in
    positive = extra > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.maximum(0.0, (long[paired][:, TTFT50] - pair[:, TTFT50]) / extra)[positive]
    slots, last = _last_per_slot(long[paired][:, SLOT][positive])
    if len(slots):
        rates = rate[last]
        return slots, rates, float(np.median(rates)), longest
    if len(base):
        long_in = float(np.median(_tokens(long, long[:, CONTEXT] + base_in)))
        gap = float(np.median(long[:, TTFT50])) - float(np.median(base[:, TTFT50]))
        return none, none, max(0.0, gap / max(long_in - base_in, 1.0)), longest
    return none, none, None, longest


def concurrency_factors(
    base: np.ndarray, parallel: np.ndarray, users: int
) -> tuple[float, float, str | None]:
    """(TTFT factor, decode factor, note) at `users` concurrent, relative to one user."""
    if users <= 1:
        return 1.0, 1.0, None
    one_ttft = float(np.median(base[:, TTFT50]))
    one_decode = float(np.median(base[:, DECODE50]))
    curve = [(1, 1.0, 1.0)]
    for level in np.unique(parallel[:, USERS]).tolist():
        points = parallel[parallel[:, USERS] == level]
        curve.append(
            (
                int(level),
                float(np.median(points[:, TTFT50])) / one_ttft,
                float(np.median(points[:, DECODE50])) / one_decode,
            )
        )
    return along_curve(curve, users)


def along_curve(
    curve: list[tuple[int, float, float]], users: int
) -> tuple[float, float, str | None]:
    """(TTFT factor, decode factor, note) at `users` on a curve of (users, TTFT factor, decode
    factor) points ascending from (1, 1.0, 1.0): interpolated in log users between points,
    held at the last point past it."""
    for (c0, t0, d0), (c1, t1, d1) in zip(curve, curve[1:], strict=False):
        if c0 <= users <= c1:
            weight = math.log(users / c0) / math.log(c1 / c0)
            return t0 + (t1 - t0) * weight, d0 + (d1 - d0) * weight, None
    top, ttft_f, decode_f = curve[-1]
    note = f"speed at {users} users taken as at {top}, the most measured (not extrapolated)"
    return ttft_f, decode_f, note


def check_shape(
    result: Projection,
    shape: Shape,
    *,
    base_in: float,
    median_rate: float | None,
    longest: float,
    parallel_runs: int,
) -> None:
    """Add to `result` the runs the shape needs and lacks, and notes on how far the measured
    prompts carry it."""
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
    if shape.concurrency > 1 and not parallel_runs:
        result.missing.append(MISSING_CONCURRENCY)


def tally(result: Projection, rows: np.ndarray) -> None:
    """Requests, availability and newest run, from every run (advisor.measures rows)."""
    ok, errors = rows[:, OK], rows[:, ERRORS]
    attempts = int(ok.sum() + errors.sum())
    result.samples = attempts
    result.availability = int(ok.sum()) / attempts if attempts else None
    result.saturated_runs = int((rows[:, SATURATED] > 0).sum())
    if len(rows):
        result.newest = datetime.fromtimestamp(float(rows[:, SLOT].max()), UTC)


def prepare(
    endpoint_id: int, rows: np.ndarray, shape: Shape
) -> tuple[Projection, Conditions | None]:
    """Everything but the task quantiles, and the conditions they come from (None when the
    endpoint is not measured for the shape). `rows`: the endpoint's runs (advisor.measures)."""
    result = Projection(endpoint_id=endpoint_id, runs=len(rows))
    tally(result, rows)
    usable = rows[(rows[:, OK] != 0) & ~np.isnan(rows[:, TTFT50]) & _present(rows[:, DECODE50])]
    one_user = usable[:, USERS] == 1
    no_context = usable[:, CONTEXT] == 0
    base = usable[no_context & one_user]
    long = usable[(usable[:, CONTEXT] > 0) & one_user]
    parallel = usable[no_context & (usable[:, USERS] > 1)]
    if not len(base):
        result.missing.append("base")
        return result, None
    rate_slots, rates, median_rate, longest = prefill_rates(base, long)
    base_in = float(np.median(_tokens(base, BASE_PROMPT_TOKENS)))
    check_shape(
        result,
        shape,
        base_in=base_in,
        median_rate=median_rate,
        longest=longest,
        parallel_runs=len(parallel),
    )
    if result.missing:
        return result, None
    ttft_f, decode_f, note = concurrency_factors(base, parallel, shape.concurrency)
    if note:
        result.notes.append(note)
    slot = base[:, SLOT]
    weights = 0.5 ** ((slot.max() - slot) / 86_400 / HALF_LIFE_DAYS)
    rate = np.full(len(base), median_rate or 0.0)
    if len(rate_slots):
        at = np.minimum(np.searchsorted(rate_slots, slot), len(rate_slots) - 1)
        found = rate_slots[at] == slot
        rate[found] = rates[at[found]]
    extra_ms = rate * np.maximum(0.0, shape.prefilled_tokens - _tokens(base, base_in))
    ttft50, ttft90 = base[:, TTFT50], base[:, TTFT90]
    ttft = (ttft50 + extra_ms) * ttft_f
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(_present(ttft50), ttft / (ttft50 * ttft_f), 1.0)
        ttft_sd = np.where(
            np.isnan(ttft90), 0.0, np.maximum(0.0, ttft90 - ttft50) / Z90 * ttft_f * scale
        )
        decode = base[:, DECODE50] * decode_f
        decode_s = shape.decoded_tokens / decode
        decode10 = base[:, DECODE10]
        slow_s = shape.decoded_tokens / (decode10 * decode_f)
        decode_sd = np.where(_present(decode10), np.maximum(0.0, slow_s - decode_s) / Z90, 0.0)
    call_sd = np.hypot(ttft_sd / 1000, decode_sd)
    result.conditions = len(base)
    result.ttft_ms = float(np.median(ttft))
    result.decode_tps = float(np.median(decode))
    result.reasoning_s = shape.reasoning_tokens / result.decode_tps
    conditions = Conditions(
        means=task_seconds(shape, ttft_ms=ttft, decode_tps=decode),
        sds=math.sqrt(shape.calls) * call_sd,
        weights=weights,
        buckets=base[:, BUCKET].astype(int),
    )
    return result, conditions


Prepare = Callable[[int, np.ndarray, Shape], tuple[Projection, Conditions | None]]


def project_all(
    points: Mapping[int, np.ndarray], shape: Shape, *, prepare_one: Prepare | None = None
) -> dict[int, Projection]:
    """The task-time distribution of `shape` on each endpoint (see the module docstring); the
    quantiles of every endpoint and time-of-day bucket come out of one vector bisection.
    `prepare_one` replaces `prepare` (advisor.measured: a custom workload's own runs)."""
    prepare_one = prepare_one or prepare
    results: dict[int, Projection] = {}
    means, sds, weights, members, fractions, targets = [], [], [], [], [], []
    offset = 0
    for endpoint_id, rows in points.items():
        projection, conditions = prepare_one(endpoint_id, rows, shape)
        results[endpoint_id] = projection
        if conditions is None:
            continue
        count = len(conditions.means)
        everything = np.arange(offset, offset + count)
        for fraction in TASK_FRACTIONS:
            members.append(everything)
            fractions.append(fraction)
            targets.append((projection, fraction, None))
        for bucket in np.unique(conditions.buckets).tolist():
            members.append(everything[conditions.buckets == bucket])
            fractions.append(0.5)
            targets.append((projection, 0.5, bucket))
        means.append(conditions.means)
        sds.append(conditions.sds)
        weights.append(conditions.weights)
        offset += count
    if not members:
        return results
    found = many_quantiles(
        np.concatenate(means),
        np.concatenate(sds),
        np.concatenate(weights),
        members,
        np.asarray(fractions),
    ).tolist()
    names = dict(
        zip(TASK_FRACTIONS, ("task_p25_s", "task_p50_s", "task_p75_s", "task_p90_s"), strict=True)
    )
    for (projection, fraction, bucket), value in zip(targets, found, strict=True):
        if bucket is None:
            setattr(projection, names[fraction], value)
        else:
            projection.p50_by_bucket[bucket] = value
    return results


def project(endpoint_id: int, points: Sequence[RunPoint] | np.ndarray, shape: Shape) -> Projection:
    """One endpoint's projection (runs as RunPoints or rows of advisor.measures.FIELDS)."""
    rows = points if isinstance(points, np.ndarray) else as_rows(points)
    return project_all({endpoint_id: rows}, shape)[endpoint_id]
