"""The state-space arm (alerts/detection/state_space.py) on plain arrays: runs since an onset
judged against what the series' own state predicts, so that a provider that wanders raises its
own bar by its drift, and a step is told from a wander by its abruptness."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest

from alerts.detection.arms import covariance, shared_offset, variances
from alerts.detection.baseline import fit
from alerts.detection.detector import LONG_ARM, SINCE_ARM, Verdict, assess_series, judge
from alerts.detection.hysteresis import Streak, Transition, advance
from alerts.detection.noise import drift
from alerts.detection.rules import DECODE, DetectorConfig
from alerts.detection.runs import Runs
from alerts.detection.state_space import (
    MAX_ONSETS,
    STATE_ARM,
    correlated_walk,
    onsets,
    step_arm,
)

CONFIG = DetectorConfig()
RULE = CONFIG.rules[DECODE]
MONDAY = datetime(2026, 3, 9, tzinfo=UTC)
STEP = math.log(0.9)  # −10 % decode, the minimum effect
HOURS = np.arange(2, 45 * 24, 8)  # 3 runs a day for 45 days


def drifting(seed: int, *, phi: float, sd: float, white: float) -> np.ndarray:
    """Each run's noise (log units): a provider state drifting in real time (AR(1), correlation
    φ per 8 h, spread `sd`, sampled hourly) plus the run's own noise (σ `white`)."""
    rng = np.random.default_rng(seed)
    decay = phi ** (1 / 8)
    path = np.zeros(45 * 24)
    for i in range(1, len(path)):
        path[i] = decay * path[i - 1] + rng.normal(0, sd * math.sqrt(1 - decay**2))
    return path[HOURS] + rng.normal(0, white, len(HOURS))


def runs_of(noise: np.ndarray, *, onset_h: float | None = None) -> Runs:
    """A 70 tok/s endpoint with a daily wave, its noise, and −10 % from `onset_h` on."""
    log = math.log(70) + 0.05 * np.sin(2 * np.pi * HOURS / 24) + noise
    if onset_h is not None:
        log = log + np.where(HOURS >= onset_h, STEP, 0.0)
    return Runs.of(MONDAY.timestamp() + HOURS * 3600.0, log)


def replay(runs: Runs, *, from_day: float, config: DetectorConfig) -> list[tuple[float, str]]:
    """Every run from `from_day` on evaluated as evaluate.py does; the hour (since MONDAY) and
    the arm of each alert opened."""
    streak, opened = Streak(), []
    for now in runs.t[runs.t > MONDAY.timestamp() + from_day * 86_400]:
        test = assess_series(runs.between(0, now), now=now, rule=RULE, config=config)
        [judgement] = judge([test], config)
        streak, transition = advance(
            streak, judgement.verdict, config, recovered=judgement.recovered,
            fresh=judgement.fresh,
        )  # fmt: skip
        if transition == Transition.OPEN:
            opened.append(((now - MONDAY.timestamp()) / 3600, judgement.arm))
    return opened


def test_it_implies_the_same_covariance_as_every_other_arms_standard_error() -> None:
    runs = runs_of(drifting(1, phi=0.9, sd=0.06, white=0.03))
    baseline = fit(runs.between(0, runs.t[90]), min_bucket_runs=4, min_week_runs=6)
    recent = runs.between(runs.t[100], runs.t[130])
    c = np.random.default_rng(0).normal(size=(4, len(recent)))
    implied = np.einsum("ki,ij,kj->k", c, covariance(recent, baseline), c)
    assert implied == pytest.approx(variances(c, recent, baseline), rel=1e-9)


def test_it_tries_every_onset_of_the_long_window_that_leaves_three_runs_at_most_nine() -> None:
    assert list(onsets(21, 30)) == list(range(21, 28))  # 3 a day: 9 runs in 72 h
    hourly = onsets(96, 168)
    assert len(hourly) == MAX_ONSETS and hourly[0] == 96 and hourly[-1] == 165
    assert len(onsets(28, 30)) == 0  # two runs since it: one of them would carry it


def test_it_reads_a_step_on_a_drifting_provider_against_where_its_state_stood() -> None:
    # A provider whose state wanders (AR(1), φ 0.95 per 8 h, σ 8 %) under 2 % run noise; −10 %
    # from the third run before the last. The runs before the onset show where the state
    # stood: the state-space arm estimates the step far more surely than the arms that
    # compare the last days with the 28-day baseline, which the wander moves by as much.
    ratios, errors, others = [], [], []
    for seed in range(8):
        runs = runs_of(drifting(seed, phi=0.95, sd=0.08, white=0.02), onset_h=HOURS[-3])
        test = assess_series(runs, now=float(runs.t[-1]), rule=RULE, config=CONFIG)
        arms = {arm.name: arm for arm in test.arms}
        state, mean_arms = arms[STATE_ARM], (arms[SINCE_ARM], arms[LONG_ARM])
        ratios.append(state.sd / min(arm.sd for arm in mean_arms))
        errors.append(abs(state.shift + STEP))
        others.append(max(abs(arm.shift + STEP) for arm in mean_arms))
    assert np.median(ratios) < 0.75  # its standard error: a quarter smaller or more
    assert max(errors) < 0.5 * -STEP  # every estimate within half the step of the planted one
    assert max(others) > -STEP  # where the mean arms miss it by more than the step itself


def test_it_catches_a_10_percent_step_within_72_hours_sooner_than_the_mean_arms() -> None:
    # 5 % run noise, 3 runs a day; −10 % decode from day 36. Evaluated after every run from
    # day 33, the alert opens within 72 h (9 runs) of the onset, and sooner than the same
    # detector without the state-space arm.
    onset = 36 * 24 + 5
    noise = np.random.default_rng(5).normal(0, 0.05, len(HOURS))
    opened = replay(runs_of(noise, onset_h=onset), from_day=33, config=CONFIG)
    assert opened and onset <= opened[0][0] <= onset + 72, opened
    without = replay(
        runs_of(noise, onset_h=onset), from_day=33, config=replace(CONFIG, step_p_value=0.0)
    )
    assert not without or without[0][0] > opened[0][0], without
    # Without the step, the same noise opens nothing.
    assert replay(runs_of(noise), from_day=33, config=CONFIG) == []


def test_it_does_not_alert_on_a_wander_as_large_as_the_step() -> None:
    # A provider whose state wanders by as much as the step (AR(1), φ 0.95 per 8 h, σ 6 %)
    # under 4 % run noise, nothing changed: its level over the evaluated fortnight moves by
    # more than 10 % from where it stood, and the state-space arm, which sees the wander in
    # the runs before any onset, is never positive; no alert opens.
    noise = drifting(2, phi=0.95, sd=0.06, white=0.04)
    runs = runs_of(noise)
    late = HOURS > 31 * 24
    assert np.ptp(noise[late]) > -STEP  # the wander is as large as the step
    for now in runs.t[late]:
        test = assess_series(runs.between(0, now), now=now, rule=RULE, config=CONFIG)
        [judgement] = judge([test], CONFIG)
        assert not (judgement.verdict == Verdict.POSITIVE and judgement.arm == STATE_ARM)
    assert replay(runs, from_day=31, config=CONFIG) == []


def test_it_leaves_the_arm_out_when_its_bar_is_zero() -> None:
    runs = runs_of(np.zeros(len(HOURS)), onset_h=HOURS[-3])
    config = replace(CONFIG, step_p_value=0.0)
    test = assess_series(runs, now=float(runs.t[-1]), rule=RULE, config=config)
    assert STATE_ARM not in {arm.name for arm in test.arms}
    baseline = fit(runs.between(0, runs.t[-20]), min_bucket_runs=4, min_week_runs=6)
    week = runs.between(runs.t[-22], np.inf)
    resid = -(week.log_value - baseline.expected(week))
    fitted = runs.between(0, runs.t[-20])
    model = drift(fitted.t, fitted.log_value - baseline.expected(fitted), baseline.overall_scale)
    arm = step_arm(week, resid, baseline, len(week) - 9, model)
    assert arm is not None and arm.shift == pytest.approx(-STEP, abs=0.01)


def test_a_drifting_provider_raises_the_mean_arms_bar_by_where_its_level_can_have_walked() -> None:
    # A provider whose state wanders (AR(1), φ 0.8 per 8 h, σ 6 %) under 6 % run noise, nothing
    # changed: its baseline's variogram shows the level walking, so every mean arm's standard
    # error counts where it can have walked since the baseline (Baseline.walk_var), and the
    # wander of day 42 (the 72 h arm opened on it before) opens nothing.
    noise = drifting(0, phi=0.8, sd=0.06, white=0.06)
    runs = runs_of(noise)
    baseline = fit(runs.between(0, runs.t[90]), min_bucket_runs=4, min_week_runs=6)
    assert baseline.walk_var > 0
    assert shared_offset(baseline) == pytest.approx(baseline.walk_var)
    assert replay(runs, from_day=30, config=CONFIG) == []
    # A real step on the same provider still opens, within 24 h (−25 % from day 36).
    onset = 36 * 24 + 5
    stepped = Runs.of(runs.t, runs.log_value + np.where(HOURS >= onset, math.log(0.75), 0.0))
    opened = replay(stepped, from_day=33, config=CONFIG)
    assert opened and onset <= opened[0][0] <= onset + 24, opened


def test_a_drift_its_correlation_shows_and_its_variogram_does_not_opens_no_alert() -> None:
    # A provider whose state wanders (AR(1), φ 0.95 per 8 h, σ 6 %) under 6 % run noise,
    # nothing changed. On day 14 its 11-day baseline's variogram is flat (no walk per hour)
    # while its lag correlation shows the drift: the state-space arm, which read the level as
    # fixed, opened on the wander there; it now reads the runs with the correlation the mean
    # arms read them with, and no alert opens.
    runs = runs_of(drifting(22, phi=0.95, sd=0.06, white=0.06))
    now = MONDAY.timestamp() + 338 * 3600.0
    test = assess_series(runs.between(0, now), now=now, rule=RULE, config=CONFIG)
    assert test.baseline.level_walk.per_hour == 0.0 and test.baseline.rho > 0.1
    assert correlated_walk(test.baseline) > 0
    assert replay(runs, from_day=10, config=CONFIG) == []


def test_a_steady_series_has_no_walk_and_its_arms_are_as_before() -> None:
    runs = runs_of(np.random.default_rng(3).normal(0, 0.06, len(HOURS)))
    baseline = fit(runs.between(0, runs.t[90]), min_bucket_runs=4, min_week_runs=6)
    assert baseline.walk_var == 0.0
    assert shared_offset(baseline) == shared_offset(replace(baseline, walk_var=0.0))
