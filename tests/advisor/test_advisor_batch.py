"""The fast path of a cold advice gives the answer of the readable one-endpoint-at-a-time path.

advisor.batch projects every candidate endpoint in one set of array operations and solves the
task quantiles by Newton's method; advisor.projection (per endpoint) and the bisection in
advisor.mixture are the definitions it must reproduce: every figure equal, task quantiles
within 1e-9 relative, so the same ranking, ties and recommendation.
"""

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from advisor.batch import _group_median_sorted, group_median, project_batch, project_lean
from advisor.measures import FIELDS
from advisor.mixture import segment_quantiles, solve_quantiles
from advisor.projection import Projection, project_all
from advisor.shape import Shape

REL = 1e-9
T0 = datetime(2026, 11, 2, tzinfo=UTC).timestamp()
SHAPES = [
    Shape(),
    Shape(input_tokens=20_000, calls=3, tool_s=1.0),
    Shape(input_tokens=200, calls=20, concurrency=10),
    Shape(input_tokens=5_000, cached_share=0.5, reasoning_tokens=100, concurrency=3),
    Shape(concurrency=50),
]


def history(rng: np.random.Generator, endpoints: int) -> dict[int, np.ndarray]:
    """Runs of each endpoint over 14 days: base, long-context (some paired with a base run at
    the same slot) and concurrency runs, with gaps (NaN), failed runs, repeats at a slot."""
    points = {}
    for endpoint in range(endpoints):
        n = int(rng.integers(0, 40))
        rows = np.full((n, len(FIELDS)), np.nan)
        slot = T0 + rng.integers(0, 14, n) * 86_400 + rng.choice([0, 21_600, 43_200], n)
        rows[:, 0] = np.sort(slot + rng.choice([0.0, 0.0, rng.uniform(1, 3000)], n))
        rows[:, 1] = rng.integers(0, 4, n)
        rows[:, 2] = rng.choice([0, 0, 0, 30_000, 8_000], n)
        rows[:, 3] = rng.choice([1, 1, 1, 10, 4], n)
        rows[:, 4] = np.where(rng.random(n) < 0.2, np.nan, rng.choice([150, 200, 30_150, 0], n))
        rows[:, 5] = rng.choice([0, 5, 5, 5], n)
        rows[:, 6] = rng.integers(0, 3, n)
        rows[:, 7] = np.where(rng.random(n) < 0.05, np.nan, rng.uniform(100, 3000, n))
        rows[:, 8] = np.where(rng.random(n) < 0.3, np.nan, rows[:, 7] * rng.uniform(1, 2, n))
        rows[:, 9] = np.where(rng.random(n) < 0.05, np.nan, rng.uniform(10, 300, n))
        rows[:, 10] = np.where(rng.random(n) < 0.3, np.nan, rows[:, 9] * rng.uniform(0.5, 1, n))
        points[1_000 + endpoint] = rows
    return points


def assert_same(reference: Projection, fast: Projection) -> None:
    for name in Projection.__slots__:
        want, got = getattr(reference, name), getattr(fast, name)
        if name.startswith("task_p") and want is not None:
            assert got == pytest.approx(want, rel=REL), name
        elif name == "p50_by_bucket":
            assert list(got) == list(want)
            assert list(got.values()) == pytest.approx(list(want.values()), rel=REL)
        else:
            assert got == want or (math.isnan(want) and math.isnan(got)), name


@pytest.mark.parametrize("whole", [False, True], ids=["some slots off the second", "whole"])
@pytest.mark.parametrize("seed", range(6))
def test_it_projects_every_endpoint_as_the_one_at_a_time_reference_does(seed, whole):
    """Runs start on whole seconds (batch keys them by their seconds, no sort); a slot off the
    second takes the other way (ranks of the distinct slots). Both pair runs as the reference."""
    rng = np.random.default_rng(seed)
    points = history(rng, int(rng.integers(1, 30)))
    if whole:
        for rows in points.values():
            rows[:, 0] = np.floor(rows[:, 0])
    measured = 0
    for shape in SHAPES:
        reference, fast = project_all(points, shape), project_batch(points, shape)
        assert list(fast) == list(reference)
        for endpoint_id, projection in reference.items():
            assert_same(projection, fast[endpoint_id])
            measured += projection.measured
        ranked = [e for _, e in sorted((p.task_p90_s, e) for e, p in reference.items()
                                       if p.measured)]  # fmt: skip
        assert ranked == [e for _, e in sorted((fast[e].task_p90_s, e) for e in ranked)]
    assert measured  # the histories do measure endpoints for these shapes


def test_it_projects_no_endpoints_and_endpoints_without_runs():
    empty = np.empty((0, len(FIELDS)))
    assert project_batch({}, Shape()) == {}
    (only,) = project_batch({7: empty}, Shape()).values()
    assert only.missing == ["base"] and only.runs == 0 and only.availability is None


@pytest.mark.parametrize("seed", range(4))
def test_it_solves_mixture_quantiles_as_bisection_does(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        size, questions = int(rng.integers(1, 50)), int(rng.integers(1, 8))
        means = rng.uniform(1, rng.choice([2, 100, 1e4]), size * questions)
        if rng.random() < 0.3:  # shared values: point masses that coincide
            means = np.round(means / 10) * 10 + 1
        sds = rng.uniform(0, rng.choice([0.01, 5, 50]), size * questions)
        sds[rng.random(size * questions) < rng.choice([0, 0.3, 1])] = 0.0  # point masses
        weights = rng.uniform(0.01, 1, size * questions)
        starts = np.arange(questions) * size
        fractions = rng.choice([0.01, 0.25, 0.5, 0.75, 0.9, 0.99], questions)
        want = segment_quantiles(means, sds, weights, starts, fractions)
        got = solve_quantiles(means, sds, weights, starts, fractions)
        assert got == pytest.approx(want, rel=REL)


@pytest.mark.parametrize("seed", range(40))
def test_it_takes_each_groups_median_as_np_median_does_whatever_the_groups_sizes(seed):
    """group_median sorts each group in a padded row of its own; with one group far larger than
    the rest it sorts every value by (group, value) instead. Both are np.median per group."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 30))
    groups = rng.integers(0, count, int(rng.integers(0, 300)))
    if seed % 2:
        groups = np.sort(groups)  # grouped, as the runs of each endpoint are
    if seed % 5 == 0:
        groups = np.append(groups, np.zeros(5_000, int))  # one group past the padding
    values = np.round(rng.standard_normal(len(groups)) * 50, int(rng.integers(0, 3)))  # ties
    want = [np.median(values[groups == g]) if (groups == g).any() else np.nan for g in range(count)]
    np.testing.assert_array_equal(group_median(values, groups, count), want)


def test_it_averages_the_same_two_middle_values_as_one_sort_of_every_value_signed_zeros_too():
    values = np.array([0.0, -0.0, 1.0, -0.0, 0.0, -0.0, 2.0, 0.0, -0.0])
    groups = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    for order in (np.arange(len(values)), np.arange(len(values))[::-1]):
        sizes = np.bincount(groups[order], minlength=3)
        got = group_median(values[order], groups[order], 3)
        assert got.tobytes() == _group_median_sorted(values[order], groups[order], sizes).tobytes()


@pytest.mark.parametrize("seed", range(8))
def test_time_of_day_p50s_solved_on_demand_are_those_of_solving_every_bucket(seed):
    """project_lean solves time-of-day p50s only for the rows an answer lists and, in each
    bucket, the pool's endpoints that could be its fastest: those figures, and each bucket's
    fastest in the pool, are what solving every bucket gives; the rest are left unsolved."""
    rng = np.random.default_rng(100 + seed)
    points = history(rng, int(rng.integers(20, 40)))
    shape = SHAPES[seed % len(SHAPES)]
    every = project_batch(points, shape)
    lean, mixtures = project_lean(points, shape)
    measured = [e for e, p in every.items() if p.measured]
    listed = [int(e) for e in rng.choice(measured, size=min(3, len(measured)), replace=False)]
    pool = [e for e in measured if rng.random() < 0.7] or measured
    mixtures.time_of_day(listed, pool)
    for endpoint_id in listed:
        assert lean[endpoint_id].p50_by_bucket == every[endpoint_id].p50_by_bucket
    solved = 0
    for bucket in range(4):
        timed = [(every[e].p50_by_bucket[bucket], e) for e in pool
                 if bucket in every[e].p50_by_bucket]  # fmt: skip
        if not timed:
            continue
        fastest, winner = min(timed)
        assert lean[winner].p50_by_bucket[bucket] == fastest
        for e in pool:
            value = lean[e].p50_by_bucket.get(bucket)
            assert value is None or value == every[e].p50_by_bucket[bucket]
            solved += value is not None
        assert min(v for v, e in timed if bucket in lean[e].p50_by_bucket) == fastest
    assert solved < sum(len(every[e].p50_by_bucket) for e in pool), "every bucket was solved"
