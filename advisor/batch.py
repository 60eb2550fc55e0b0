"""The projection of every candidate endpoint at once (what an advice computes).

advisor.projection defines a projection one endpoint at a time (`prepare`, readable, and the
reference the tests hold this module to); done that way a cold advice over 100 endpoints spends
most of its time in thousands of small numpy calls. Here the runs of all endpoints are stacked
with an endpoint index and every step is one array operation over all of them: sums and maxima
per endpoint by reduceat over contiguous segments, medians by one sort per quantity, the
pairing of long-context runs with base runs at the same slot by one search over
(endpoint, slot) keys, and the task quantiles of every endpoint and time-of-day bucket solved
together by Newton's method inside a bracket (advisor.mixture.solve_quantiles: a handful of
evaluations of the mixtures where the reference bisects 48 times). Every figure but the task
quantiles comes out of the same floating-point operations in the same order as the reference,
so it is the same number; the quantiles agree to ~1e-13 (tests hold both to 1e-9), so the
ranking, ties and recommendation are the same.

`project_lean` solves only the p90 (the ranking's key) of every endpoint, and keeps each
endpoint's mixture (`TaskMixtures`) so its p25–p75 and time-of-day p50s can be solved later for
the endpoints an answer shows: each question is solved on its own components alone, so a
quantile solved later is the number solved with all the others. It reads the runs stacked
(`Stacked`): by `stack` from each endpoint's rows, or by advisor.digest.load_stacked from the
digest's days already split by kind.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from .measures import (
    BUCKET,
    CONTEXT,
    DECODE10,
    DECODE50,
    ERRORS,
    FIELDS,
    OK,
    SATURATED,
    SLOT,
    TTFT50,
    TTFT90,
    USERS,
)
from .mixture import brackets, solve_quantiles
from .projection import (
    BASE_PROMPT_TOKENS,
    HALF_LIFE_DAYS,
    TASK_FRACTIONS,
    Z90,
    Projection,
    _present,
    _tokens,
    along_curve,
    check_shape,
)
from .shape import Shape, task_seconds

QUANTILE_NAMES = ("task_p25_s", "task_p50_s", "task_p75_s", "task_p90_s")
LEAN = len(TASK_FRACTIONS) - 1  # the last fraction, the p90 (the ranking's key): solved for all


def _starts(groups: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows of each group, index of its first row) for rows grouped contiguously."""
    sizes = np.bincount(groups, minlength=count)
    return sizes, np.cumsum(sizes) - sizes


def group_max(values: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    """The largest value of each group (rows grouped contiguously, ascending); NaN if none."""
    sizes, starts = _starts(groups, count)
    out = np.full(count, np.nan)
    some = sizes > 0
    if some.any():
        out[some] = np.maximum.reduceat(values, starts[some])
    return out


def group_median(values: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    """np.median of each group's values (groups in any order, values without NaN): the middle
    value, or the mean of the two middle ones; NaN for an empty group.

    Each group's values are sorted in a row of their own (padded with NaN, which sorts last): a
    few hundred short sorts, where one sort of every value by (group, value) cost ~4× as much.
    Stable, as that sort was: equal values (0.0 and -0.0) keep their order, so the same two
    middle values are averaged."""
    sizes = np.bincount(groups, minlength=count)
    widest = int(sizes.max()) if len(values) else 0
    if count * widest > 4 * len(values) + 1024:  # one group far larger than the rest
        return _group_median_sorted(values, groups, sizes)
    # Each value's place in its group: its rank among the group's values in their given order.
    by_group = np.argsort(groups, kind="stable")
    place = np.empty(len(values), np.intp)
    place[by_group] = np.arange(len(values)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    padded = np.full((count, widest), np.nan)
    padded[groups, place] = values
    padded.sort(axis=1, kind="stable")
    out = np.full(count, np.nan)
    some = np.flatnonzero(sizes)
    size = sizes[some]
    out[some] = (padded[some, (size - 1) // 2] + padded[some, size // 2]) / 2
    return out


def _group_median_sorted(values: np.ndarray, groups: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """group_median by one sort of every value by (group, value)."""
    order = np.lexsort((values, groups))
    ordered = values[order]
    starts = np.cumsum(sizes) - sizes
    out = np.full(len(sizes), np.nan)
    some = sizes > 0
    low = starts[some] + (sizes[some] - 1) // 2
    high = starts[some] + sizes[some] // 2
    out[some] = (ordered[low] + ordered[high]) / 2
    return out


def rows_at(rows: np.ndarray, where: np.ndarray) -> np.ndarray:
    """rows[where] (a mask or indexes), column-major as project_batch lays its runs out."""
    if where.dtype == bool:
        where = np.flatnonzero(where)
    return rows.T.take(where, axis=1).T


def _last_per_key(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys ascending, index of the last row with each): a later run at the same
    slot stands for it."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    ends = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True)) if len(keys) else order
    return ordered[ends], order[ends]


def _lookup(keys: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(where each wanted key is in the sorted `keys`, whether it is there)."""
    if not len(keys):
        return np.zeros(len(wanted), np.intp), np.zeros(len(wanted), bool)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return at, keys[at] == wanted


@dataclass(slots=True)
class _Kinds:
    """The usable runs of every endpoint by kind, each with its endpoint index (`*_group`) and
    (endpoint, slot) key: base (one user, no padding), long (padded), parallel (c > 1; no rows
    for a one-user shape, only their groups)."""

    base: np.ndarray
    base_group: np.ndarray
    base_key: np.ndarray
    long: np.ndarray
    long_group: np.ndarray
    long_key: np.ndarray
    parallel: np.ndarray
    parallel_group: np.ndarray


@dataclass(slots=True)
class _Prefill:
    """projection.prefill_rates for every endpoint: median base prompt, longest measured
    prompt, the rate per (endpoint, slot) key where a long run pairs with a base run, and each
    endpoint's median rate (NaN where none)."""

    base_in: np.ndarray
    longest: list[float]
    rate_keys: np.ndarray
    rates: np.ndarray
    median_rate: np.ndarray


def project_batch(
    points: Mapping[int, np.ndarray] | Stacked, shape: Shape
) -> dict[int, Projection]:
    """advisor.projection.project_all, computed for all endpoints together."""
    results, mixtures = project_lean(points, shape)
    mixtures.complete(list(results))
    mixtures.time_of_day(list(results))
    return results


def project_lean(
    points: Mapping[int, np.ndarray] | Stacked, shape: Shape
) -> tuple[dict[int, Projection], TaskMixtures]:
    """project_batch with only the p90 solved; the mixtures solve the rest for the endpoints
    asked (TaskMixtures.complete, TaskMixtures.time_of_day)."""
    runs = points if isinstance(points, Stacked) else stack(points, users=shape.concurrency)
    ids = runs.ids
    results = {e: Projection(endpoint_id=e, runs=n) for e, n in zip(ids, runs.sizes, strict=True)}
    none = TaskMixtures(results, {})
    if not ids:
        return results, none
    _tally(runs, results)
    kinds = runs.kinds
    count = len(ids)
    prefill = _prefill(kinds, count)
    measured = _check_shapes(kinds, prefill, ids, results, shape)
    if not measured.any():
        return results, none
    ttft_f, decode_f = _concurrency(
        kinds.base, kinds.base_group, kinds.parallel, kinds.parallel_group, measured, ids, results,
        shape,
    )  # fmt: skip
    mixtures = _conditions(kinds, prefill, ttft_f, decode_f, measured, ids, results, shape)
    return results, mixtures


@dataclass(slots=True)
class Stacked:
    """The runs of many endpoints as project_lean reads them: the endpoints in order (`ids`),
    each one's runs in the window (`sizes`), their tallies (arrays by endpoint: requests ok and
    failed, runs whose client was saturated, the newest slot, NaN where none) and its usable
    runs by kind, each row with its endpoint's index (`stack`, or advisor.digest.load_stacked
    from the digest's days)."""

    ids: list[int]
    sizes: list[int]
    ok: np.ndarray
    errors: np.ndarray
    saturated: np.ndarray
    newest: np.ndarray
    kinds: _Kinds


def stack(points: Mapping[int, np.ndarray], *, users: int) -> Stacked:
    """Each endpoint's runs (rows of advisor.measures.FIELDS, in `points`' order) stacked."""
    ids = list(points)
    count = len(ids)
    sizes = [len(points[e]) for e in ids]
    # Column-major: every step reads one figure of many runs at once, and a figure of runs
    # laid out row after row is strided across all of their bytes (each figure's pass cost
    # what a pass over all twelve does).
    rows = np.concatenate(
        [points[e].reshape(-1, len(FIELDS)) for e in ids] or [np.empty((0, len(FIELDS)))],
        out=np.empty((sum(sizes), len(FIELDS)), order="F"),
    )
    group = np.repeat(np.arange(count), sizes)
    tallies = tally_rows(rows, group, count)
    return Stacked(ids, sizes, *tallies, _kinds(rows, group, users=users))


def tally_rows(
    rows: np.ndarray, group: np.ndarray, count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(requests ok, requests failed, saturated runs, newest slot) of each group's runs."""
    return (
        np.bincount(group, rows[:, OK], count),
        np.bincount(group, rows[:, ERRORS], count),
        np.bincount(group, rows[:, SATURATED] > 0, count),
        group_max(rows[:, SLOT], group, count),
    )


def _tally(runs: Stacked, results: dict[int, Projection]) -> None:
    """Samples, availability and newest run of every endpoint, from all its runs."""
    ok_sum, error_sum = runs.ok.tolist(), runs.errors.tolist()
    newest, saturated = runs.newest.tolist(), runs.saturated.tolist()
    for i, endpoint_id in enumerate(runs.ids):
        result = results[endpoint_id]
        result.saturated_runs = int(saturated[i])
        attempts = int(ok_sum[i] + error_sum[i])
        result.samples = attempts
        result.availability = int(ok_sum[i]) / attempts if attempts else None
        if runs.sizes[i]:
            result.newest = datetime.fromtimestamp(newest[i], UTC)


def _slot_keys(slots: np.ndarray, group: np.ndarray) -> np.ndarray:
    """An integer key per row, ordered as (endpoint, slot) and equal only for the same endpoint
    and slot: each slot's whole seconds past the first slot (runs start on whole seconds), or
    its rank among the distinct slots where one is not whole (a sort, ~10× slower)."""
    if not len(slots):
        return np.zeros(0, np.int64)
    if np.array_equal(slots, np.floor(slots)):
        first = slots.min()
        offset = (slots - first).astype(np.int64)
        return group * (int(slots.max() - first) + 1) + offset
    _, rank = np.unique(slots, return_inverse=True)
    return group * (int(rank.max()) + 1) + rank.reshape(-1)


def kind_masks(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which runs are usable (ok, with a TTFT and a decode speed) base runs (one user, no
    padding), long-context runs (padded, one user) and parallel runs (no padding, c > 1)."""
    usable = (rows[:, OK] != 0) & ~np.isnan(rows[:, TTFT50]) & _present(rows[:, DECODE50])
    one_user = usable & (rows[:, USERS] == 1)
    no_context = usable & (rows[:, CONTEXT] == 0)
    return (
        no_context & one_user,
        (rows[:, CONTEXT] > 0) & one_user,
        no_context & (rows[:, USERS] > 1),
    )


def _kinds(rows: np.ndarray, group: np.ndarray, *, users: int) -> _Kinds:
    """The usable runs split by kind; the parallel runs' figures only where the shape has more
    than one user (one user needs only their count)."""
    key = _slot_keys(rows[:, SLOT], group)  # of every run: only their order and equality count
    is_base, is_long, is_parallel = kind_masks(rows)
    return _Kinds(
        base=rows_at(rows, is_base), base_group=group[is_base], base_key=key[is_base],
        long=rows_at(rows, is_long), long_group=group[is_long], long_key=key[is_long],
        parallel=rows_at(rows, is_parallel if users > 1 else np.zeros(0, np.intp)),
        parallel_group=group[is_parallel],
    )  # fmt: skip


def kinds_of(
    base: np.ndarray,
    base_group: np.ndarray,
    long: np.ndarray,
    long_group: np.ndarray,
    parallel: np.ndarray,
    parallel_group: np.ndarray,
) -> _Kinds:
    """_Kinds of runs already split by kind (each kind's rows grouped as `_kinds` orders them),
    keyed as `_kinds` keys them: by order and equality of (endpoint, slot)."""
    key = _slot_keys(
        np.concatenate([base[:, SLOT], long[:, SLOT]]), np.concatenate([base_group, long_group])
    )
    return _Kinds(
        base=base, base_group=base_group, base_key=key[: len(base)],
        long=long, long_group=long_group, long_key=key[len(base) :],
        parallel=parallel, parallel_group=parallel_group,
    )  # fmt: skip


def _prefill(kinds: _Kinds, count: int) -> _Prefill:
    """Prefill cost (projection.prefill_rates): base_in there falls back to the standard prompt."""
    base, base_group, long, long_group = kinds.base, kinds.base_group, kinds.long, kinds.long_group
    base_runs = np.bincount(base_group, minlength=count)
    long_runs = np.bincount(long_group, minlength=count)
    base_in = group_median(_tokens(base, BASE_PROMPT_TOKENS), base_group, count)
    prefill_base_in = np.where(base_in == 0, BASE_PROMPT_TOKENS, base_in)
    long_tokens = _tokens(long, long[:, CONTEXT] + prefill_base_in[long_group])
    longest = np.where(
        long_runs > 0, group_max(long_tokens, long_group, count), prefill_base_in
    ).tolist()
    base_keys, base_last = _last_per_key(kinds.base_key)
    at, paired = _lookup(base_keys, kinds.long_key)
    pair = rows_at(base, base_last[at[paired]])
    paired_long, paired_group = rows_at(long, paired), long_group[paired]
    pair_in = _tokens(pair, prefill_base_in[paired_group])
    extra = _tokens(paired_long, paired_long[:, CONTEXT] + pair_in) - pair_in
    positive = extra > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.maximum(0.0, (paired_long[:, TTFT50] - pair[:, TTFT50]) / extra)[positive]
    rate_keys, rate_last = _last_per_key(kinds.long_key[paired][positive])
    rates = rate[rate_last]
    median_rate = group_median(rates, paired_group[positive][rate_last], count)
    unpaired = np.isnan(median_rate) & (long_runs > 0) & (base_runs > 0)
    if unpaired.any():
        long_in = group_median(long_tokens, long_group, count)
        gap = group_median(long[:, TTFT50], long_group, count) - group_median(
            base[:, TTFT50], base_group, count
        )
        fallback = np.maximum(0.0, gap / np.maximum(long_in - prefill_base_in, 1.0))
        median_rate = np.where(unpaired, fallback, median_rate)
    return _Prefill(base_in, longest, rate_keys, rates, median_rate)


def _check_shapes(
    kinds: _Kinds,
    prefill: _Prefill,
    ids: list[int],
    results: dict[int, Projection],
    shape: Shape,
) -> np.ndarray:
    """Which endpoints are measured for the shape (projection.check_shape on each)."""
    count = len(ids)
    base_runs = np.bincount(kinds.base_group, minlength=count)
    parallel_runs = np.bincount(kinds.parallel_group, minlength=count).tolist()
    measured = np.zeros(count, bool)
    base_in_list, rate_list = prefill.base_in.tolist(), prefill.median_rate.tolist()
    for i, endpoint_id in enumerate(ids):
        result = results[endpoint_id]
        if not base_runs[i]:
            result.missing.append("base")
            continue
        check_shape(
            result,
            shape,
            base_in=base_in_list[i],
            median_rate=None if math.isnan(rate_list[i]) else rate_list[i],
            longest=prefill.longest[i],
            parallel_runs=parallel_runs[i],
        )
        measured[i] = not result.missing
    return measured


def _conditions(
    kinds: _Kinds,
    prefill: _Prefill,
    ttft_f: np.ndarray,
    decode_f: np.ndarray,
    measured: np.ndarray,
    ids: list[int],
    results: dict[int, Projection],
    shape: Shape,
) -> TaskMixtures:
    """Each measured endpoint's task time under each base run (projection.prepare), then its
    medians, its p90 and time-of-day p50s, and its mixture for the other quantiles."""
    count = len(ids)
    base, bg, base_key = kinds.base, kinds.base_group, kinds.base_key
    keep = measured[bg]
    if not keep.all():  # (every candidate measured, the usual answer: nothing to copy)
        base, bg, base_key = rows_at(base, keep), bg[keep], base_key[keep]
    slot = base[:, SLOT]
    weights = 0.5 ** ((group_max(slot, bg, count)[bg] - slot) / 86_400 / HALF_LIFE_DAYS)
    rate = np.where(np.isnan(prefill.median_rate), 0.0, prefill.median_rate)[bg]
    at, found = _lookup(prefill.rate_keys, base_key)
    rate[found] = prefill.rates[at[found]]
    extra_ms = rate * np.maximum(0.0, shape.prefilled_tokens - _tokens(base, prefill.base_in[bg]))
    tf, df = ttft_f[bg], decode_f[bg]
    ttft50, ttft90 = base[:, TTFT50], base[:, TTFT90]
    ttft = (ttft50 + extra_ms) * tf
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(_present(ttft50), ttft / (ttft50 * tf), 1.0)
        ttft_sd = np.where(
            np.isnan(ttft90), 0.0, np.maximum(0.0, ttft90 - ttft50) / Z90 * tf * scale
        )
        decode = base[:, DECODE50] * df
        decode_s = shape.decoded_tokens / decode
        decode10 = base[:, DECODE10]
        slow_s = shape.decoded_tokens / (decode10 * df)
        decode_sd = np.where(_present(decode10), np.maximum(0.0, slow_s - decode_s) / Z90, 0.0)
    call_sd = np.hypot(ttft_sd / 1000, decode_sd)
    means = task_seconds(shape, ttft_ms=ttft, decode_tps=decode)
    sds = math.sqrt(shape.calls) * call_sd
    ttft_ms = group_median(ttft, bg, count).tolist()
    decode_tps = group_median(decode, bg, count).tolist()
    conditions = np.bincount(bg, minlength=count)
    chosen = np.flatnonzero(measured)
    for i in chosen.tolist():
        result = results[ids[i]]
        result.conditions = int(conditions[i])
        result.ttft_ms = ttft_ms[i]
        result.decode_tps = decode_tps[i]
        result.reasoning_s = shape.reasoning_tokens / decode_tps[i]
    buckets = _quantiles(means, sds, weights, bg, base[:, BUCKET].astype(int), chosen, ids, results)
    _, starts = _starts(bg, count)
    segments = {ids[i]: (int(starts[i]), int(starts[i] + conditions[i])) for i in chosen.tolist()}
    return TaskMixtures(results, segments, means, sds, weights, buckets)


def _concurrency(
    base: np.ndarray,
    base_group: np.ndarray,
    parallel: np.ndarray,
    parallel_group: np.ndarray,
    measured: np.ndarray,
    ids: list[int],
    results: dict[int, Projection],
    shape: Shape,
) -> tuple[np.ndarray, np.ndarray]:
    """TTFT and decode factors of each endpoint at the shape's concurrency
    (projection.concurrency_factors); notes where it is past the most measured."""
    count = len(ids)
    ttft_f, decode_f = np.ones(count), np.ones(count)
    users = shape.concurrency
    if users <= 1:
        return ttft_f, decode_f
    one_ttft = group_median(base[:, TTFT50], base_group, count).tolist()
    one_decode = group_median(base[:, DECODE50], base_group, count).tolist()
    levels, level_rank = np.unique(parallel[:, USERS], return_inverse=True)
    width = max(len(levels), 1)
    level_key = parallel_group * width + level_rank.reshape(-1)
    present = (np.bincount(level_key, minlength=count * width) > 0).reshape(count, width)
    ttft_at = group_median(parallel[:, TTFT50], level_key, count * width).reshape(count, width)
    decode_at = group_median(parallel[:, DECODE50], level_key, count * width)
    decode_at = decode_at.reshape(count, width)
    level_list = [int(level) for level in levels.tolist()]
    for i in np.flatnonzero(measured).tolist():
        curve = [(1, 1.0, 1.0)]
        ttfts, decodes = ttft_at[i].tolist(), decode_at[i].tolist()
        for j in np.flatnonzero(present[i]).tolist():
            curve.append((level_list[j], ttfts[j] / one_ttft[i], decodes[j] / one_decode[i]))
        ttft_f[i], decode_f[i], note = along_curve(curve, users)
        if note:
            results[ids[i]].notes.append(note)
    return ttft_f, decode_f


def _quantiles(
    means: np.ndarray,
    sds: np.ndarray,
    weights: np.ndarray,
    groups: np.ndarray,
    buckets: np.ndarray,
    chosen: np.ndarray,
    ids: list[int],
    results: dict[int, Projection],
) -> _Buckets:
    """The task p90 of each measured endpoint, all solved together; and the components of each
    endpoint's time-of-day questions (solved later, TaskMixtures.time_of_day), in the order the
    reference lays them out."""
    count = len(ids)
    _, starts = _starts(groups, count)
    segments = starts[chosen]
    found = solve_quantiles(
        means, sds, weights, segments, np.full(len(segments), TASK_FRACTIONS[LEAN])
    ).tolist()
    for k, i in enumerate(chosen.tolist()):
        results[ids[i]].task_p90_s = found[k]
    width = int(buckets.max()) + 1
    order = np.lexsort((buckets, groups))  # stable: run order within each endpoint and bucket
    bucket_key = (groups * width + buckets)[order]
    firsts = np.flatnonzero(np.append(True, bucket_key[1:] != bucket_key[:-1]))
    owners = np.asarray(ids)[bucket_key[firsts] // width]
    return _Buckets(order, firsts, owners, bucket_key[firsts] % width)


@dataclass(slots=True)
class _Buckets:
    """Each measured endpoint's time-of-day questions (the p50 of its runs in one bucket), by
    endpoint and bucket: question q's components are order[starts[q]:starts[q + 1]]."""

    order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))
    owners: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    buckets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))


@dataclass(slots=True)
class TaskMixtures:
    """Each measured endpoint's task-time mixture (its base runs' means, spreads and recency
    weights, endpoint after endpoint; `segments`: an endpoint's [start, stop)), kept so that
    the quantiles project_lean left out are solved only for the endpoints an answer shows."""

    results: dict[int, Projection]
    segments: dict[int, tuple[int, int]]
    means: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    buckets: _Buckets = field(default_factory=_Buckets)
    _solved: np.ndarray | None = None  # which time-of-day questions are solved

    def complete(self, endpoint_ids: Iterable[int]) -> None:
        """Solve p25, p50 and p75 of these endpoints (those measured and not solved yet)."""
        wanted = [
            e
            for e in dict.fromkeys(endpoint_ids)
            if e in self.segments and self.results[e].task_p50_s is None
        ]
        if not wanted:
            return
        spans = [self.segments[e] for e in wanted]
        sizes = np.array([stop - start for start, stop in spans])
        rows = np.concatenate([np.arange(start, stop) for start, stop in spans])
        fractions = TASK_FRACTIONS[:LEAN]
        starts = np.cumsum(sizes) - sizes
        question_starts = (np.arange(len(fractions))[:, None] * len(rows) + starts).ravel()
        found = solve_quantiles(
            np.tile(self.means[rows], len(fractions)),
            np.tile(self.sds[rows], len(fractions)),
            np.tile(self.weights[rows], len(fractions)),
            question_starts,
            np.repeat(fractions, len(wanted)),
        ).tolist()
        for f, name in enumerate(QUANTILE_NAMES[:LEAN]):
            for k, endpoint_id in enumerate(wanted):
                setattr(self.results[endpoint_id], name, found[f * len(wanted) + k])

    def time_of_day(self, listed: Iterable[int], pool: Iterable[int] = ()) -> None:
        """Solve the time-of-day p50s (Projection.p50_by_bucket) of every bucket of the `listed`
        endpoints and, in each bucket, of the `pool` endpoints that could be its fastest: those
        whose p50 can be no higher than every other's is sure to be (its bracket's low end at
        most the least high end; advice.tod_winners picks among them)."""
        questions = self.buckets
        if not len(questions.starts):
            return
        if self._solved is None:
            self._solved = np.zeros(len(questions.starts), bool)
        wanted = np.isin(questions.owners, np.fromiter(listed, np.int64))
        contenders = np.isin(questions.owners, np.fromiter(pool, np.int64))
        if contenders.any():
            means, sds, _, starts = self._laid_out(np.flatnonzero(contenders))
            low, high = brackets(means, sds, starts, np.full(len(starts), 0.5))
            least_high = np.full(int(questions.buckets.max()) + 1, np.inf)
            np.minimum.at(least_high, questions.buckets[contenders], high)
            wanted[np.flatnonzero(contenders)] |= low <= least_high[questions.buckets[contenders]]
        asked = np.flatnonzero(wanted & ~self._solved)
        if not len(asked):
            return
        self._solved[asked] = True
        means, sds, weights, starts = self._laid_out(asked)
        found = solve_quantiles(means, sds, weights, starts, np.full(len(asked), 0.5)).tolist()
        owners = questions.owners[asked].tolist()
        for endpoint_id, bucket, value in zip(
            owners, questions.buckets[asked].tolist(), found, strict=True
        ):
            self.results[endpoint_id].p50_by_bucket[bucket] = value
        for endpoint_id in set(owners):  # in bucket order, however they were solved
            projection = self.results[endpoint_id]
            projection.p50_by_bucket = dict(sorted(projection.p50_by_bucket.items()))

    def _laid_out(
        self, questions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(means, sds, weights, starts) of these time-of-day questions, one after another."""
        layout = self.buckets
        ends = np.append(layout.starts[1:], len(layout.order))
        sizes = ends[questions] - layout.starts[questions]
        starts = np.cumsum(sizes) - sizes
        shift = np.repeat(layout.starts[questions] - starts, sizes)
        rows = layout.order[shift + np.arange(int(sizes.sum()))]
        return self.means[rows], self.sds[rows], self.weights[rows], starts
