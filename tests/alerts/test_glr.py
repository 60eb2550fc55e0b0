"""The likelihood-ratio arm (alerts/detection/glr.py): the largest log-likelihood ratio of a step
since an onset, floored at the minimum effect, with its p-value under the baseline's fitted
state-space model."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest
from scipy import special

from alerts.detection.baseline import Runs, fit
from alerts.detection.detector import STEP_MEAN_ARMS, assess_series
from alerts.detection.glr import GLR_ARM, null_p, statistic, thresholds
from alerts.detection.rules import DECODE, DetectorConfig
from alerts.detection.state_space import onset_estimates

CONFIG = replace(DetectorConfig(), glr_p_value=0.0005)
RULE = CONFIG.rules[DECODE]
FLOOR = RULE.log_shift(RULE.min_effect)
MONDAY = datetime(2026, 3, 9, tzinfo=UTC)
HOURS = np.arange(2, 45 * 24, 8)  # 3 runs a day for 45 days


def runs_of(seed: int, *, step: float = 0.0, onset_h: float = np.inf, drift: float = 0.0) -> Runs:
    """A 70 tok/s endpoint with a daily wave, own noise of 5 %, a random walk of `drift` a run
    and decode `step` slower (a fraction) from `onset_h` on."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 0.05, len(HOURS)) + np.cumsum(rng.normal(0, drift, len(HOURS)))
    log = math.log(70) + 0.05 * np.sin(2 * np.pi * HOURS / 24) + noise
    log = log + np.where(HOURS >= onset_h, math.log1p(-step), 0.0)
    return Runs.of(MONDAY.timestamp() + HOURS * 3600.0, log)


def onset_correlation(runs: Runs):
    """The onsets' d_τ and the correlation of their z_τ under the model of a baseline fitted
    on the first four weeks, for the week of runs that follows."""
    baseline = fit(runs.between(0, runs.t[84]), min_bucket_runs=4, min_week_runs=6)
    week = runs.between(runs.t[84], runs.t[105])
    found = onset_estimates(week, np.zeros(len(week)), baseline, 12, baseline.level_walk)
    _, _, cov, coefficients, _, sds = found
    return FLOOR / sds, coefficients @ cov @ coefficients.T / np.outer(sds, sds)


def test_the_statistic_is_the_step_estimates_likelihood_ratio_floored_at_the_minimum_effect():
    d = np.array([2.0, 2.0])
    # z ≥ d: the step as estimated (z² / 2); below: a step of the minimum effect (d z − d² / 2)
    assert statistic(np.array([3.0, 1.0]), d) == pytest.approx([4.5, 0.0])
    for value in (0.5, 2.0, 6.0):
        assert statistic(thresholds(value, d), d) == pytest.approx([value, value])


@pytest.mark.parametrize("drift", [0.0, 0.02])
def test_its_p_value_is_the_fitted_models_null_as_a_simulation_of_it_finds(drift) -> None:
    d, correlation = onset_correlation(runs_of(3, drift=drift))
    rng = np.random.default_rng(0)
    z = rng.standard_normal((400_000, len(d))) @ np.linalg.cholesky(correlation).T
    simulated = statistic(z, d).max(axis=1)
    for share in (0.01, 0.002):
        bar = float(np.quantile(simulated, 1 - share))
        assert null_p(bar, d, correlation) == pytest.approx(share, rel=0.2)
    if drift:  # a walking level leaves the onsets' estimates little in common
        return
    # Bonferroni over the onsets, as the state-space arm takes it, overstates it severalfold
    bar = float(np.quantile(simulated, 1 - 0.002))
    bonferroni = len(d) * float(np.max(special.ndtr(-thresholds(bar, d))))
    assert bonferroni > 2 * null_p(bar, d, correlation)


def test_a_step_of_the_minimum_effect_is_surer_to_it_than_to_the_state_space_arm() -> None:
    runs = runs_of(5, step=0.10, onset_h=33 * 24)
    now = runs.t[runs.t > MONDAY.timestamp() + 35 * 86_400][0]
    test = assess_series(runs.between(0, now), now=now, rule=RULE, config=CONFIG)
    arms = {arm.name: arm for arm in test.arms}
    assert arms[GLR_ARM].p_value < CONFIG.glr_p_value
    assert arms[GLR_ARM].p_value < arms["step since"].p_value


def test_with_no_step_it_finds_nothing() -> None:
    runs = runs_of(5)
    now = runs.t[runs.t > MONDAY.timestamp() + 35 * 86_400][0]
    test = assess_series(runs.between(0, now), now=now, rule=RULE, config=CONFIG)
    arms = {arm.name: arm for arm in test.arms}
    assert arms[GLR_ARM].p_value > 0.05


def test_replacing_the_mean_step_arms_leaves_them_out_of_the_family_not_out_of_the_verdict():
    runs = runs_of(5, step=0.10, onset_h=33 * 24)
    now = runs.t[runs.t > MONDAY.timestamp() + 35 * 86_400][0]
    config = replace(CONFIG, glr_replaces_means=True)
    with_means = assess_series(runs.between(0, now), now=now, rule=RULE, config=CONFIG)
    without = assess_series(runs.between(0, now), now=now, rule=RULE, config=config)
    assert {a.name for a in with_means.arms} >= set(STEP_MEAN_ARMS)
    assert not {a.name for a in without.arms} & set(STEP_MEAN_ARMS)
    assert GLR_ARM in {a.name for a in without.arms}
    # the last day's shift, which "back to normal" reads, is the 24 h arm's all the same
    assert without.settled == with_means.settled
    assert without.shift == with_means.shift
