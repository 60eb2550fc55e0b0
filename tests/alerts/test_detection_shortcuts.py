"""The detector's shortcuts read exactly what the plain computation reads: an arm on part of
a window takes the window's own-noise covariance, the drift blocks are summed from one
computation of every block, the variogram takes the pairs of runs close enough in one pass.
Exact equality: a faster detector must give the same verdicts, figure for figure."""

from __future__ import annotations

import math

import numpy as np

from alerts.detection.arms import variances
from alerts.detection.baseline import DRIFT_BLOCK_H, _block_noise_sums, fit
from alerts.detection.noise import VARIOGRAM_H, _within
from alerts.detection.runs import Runs

SCHEDULE = np.arange(2, 45 * 24, 8)  # 3 runs a day for 45 days, some of them late
HOURS = SCHEDULE + np.resize([0.0, 0.3, 1.1], len(SCHEDULE))


def drifting_runs(seed: int) -> Runs:
    """A drifting provider (AR(1) per run, φ 0.9) under run noise, 3 runs a day, late runs."""
    rng = np.random.default_rng(seed)
    state = np.zeros(len(HOURS))
    for i in range(1, len(state)):
        state[i] = 0.9 * state[i - 1] + rng.normal(0, 0.03)
    log = math.log(70) + 0.05 * np.sin(2 * np.pi * HOURS / 24) + state
    return Runs.of(1_700_000_000 + np.round(HOURS * 3600.0), log + rng.normal(0, 0.03, len(HOURS)))


def test_an_arm_on_part_of_a_window_reads_the_windows_noise_as_its_own() -> None:
    runs = drifting_runs(1)
    baseline = fit(runs.between(0, runs.t[90]), min_bucket_runs=4, min_week_runs=6)
    assert baseline.rho > 0  # the correlation in hours is what is shared
    window = runs.between(runs.t[100], runs.t[130])
    noise = baseline.noise_covariance(window)
    mask = (window.bucket == window.bucket[-1]) | (np.arange(len(window)) >= len(window) - 4)
    index = np.flatnonzero(mask)
    part = window.where(mask)
    assert np.array_equal(noise[index[:, None], index], baseline.noise_covariance(part))
    c = np.full(len(part), 1 / len(part))
    given = variances(c, part, baseline, noise[index[:, None], index])
    assert np.array_equal(given, variances(c, part, baseline))


def test_the_drift_blocks_sum_each_blocks_own_noise() -> None:
    runs = drifting_runs(2).between(0, 1_700_000_000 + 28 * 86_400)
    baseline = fit(runs, min_bucket_runs=4, min_week_runs=6)
    block = ((runs.t - runs.t[0]) // (DRIFT_BLOCK_H * 3600.0)).astype(int)
    spans = []
    for b in np.unique(block):
        mine = np.flatnonzero(block == b)
        if len(mine) >= 2:
            spans.append((int(mine[0]), int(mine[-1]) + 1))
    one_by_one = [
        float(baseline.noise_covariance(runs.between_index(lo, hi)).sum()) for lo, hi in spans
    ]
    assert _block_noise_sums(baseline, runs, spans) == one_by_one


def test_the_variogram_takes_every_pair_within_its_longest_lag_offset_by_offset() -> None:
    t = drifting_runs(3).t[:60]
    later, earlier = _within(t, VARIOGRAM_H * 3600.0)
    inside = (t[later] - t[earlier]) / 3600.0 <= VARIOGRAM_H
    expected = [
        (i + k, i)
        for k in range(1, len(t))
        for i in range(len(t) - k)
        if (t[i + k] - t[i]) / 3600.0 <= VARIOGRAM_H
    ]
    assert list(zip(later[inside].tolist(), earlier[inside].tolist(), strict=True)) == expected
