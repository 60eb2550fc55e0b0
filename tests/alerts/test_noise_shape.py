"""The arms' p-values read through the shape of the series' own noise (issue 28): a slow tail
(one replica in seven much slower) makes a day of slow runs far likelier than normal noise
would, so it is not a regression; a real step on the same series still is."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest
from scipy import special

from alerts.detection.arms import arm_skew, p_value
from alerts.detection.baseline import fit
from alerts.detection.detector import DAY_ARM, Verdict, assess_series, judge
from alerts.detection.rules import DECODE, DetectorConfig
from alerts.detection.runs import Runs

CONFIG = DetectorConfig()
RULE = CONFIG.rules[DECODE]
MONDAY = datetime(2026, 3, 9, tzinfo=UTC)
HOURS = np.arange(2, 35 * 24, 8)  # 3 runs a day for 35 days
SLOW = math.log(1 / 1.17)  # a run that met the slow replica: 17 % less decode speed


def slow_tail(seed: int) -> np.ndarray:
    """Each run's noise (log units): normal (σ 0.03), and 15 % of runs on the slow replica."""
    rng = np.random.default_rng(seed)
    n = len(HOURS)
    return rng.normal(0, 0.03, n) + np.where(rng.uniform(size=n) < 0.15, SLOW, 0.0)


def runs_of(noise: np.ndarray) -> Runs:
    """A 70 tok/s endpoint with a daily wave and its noise."""
    log = math.log(70) + 0.05 * np.sin(2 * np.pi * HOURS / 24) + noise
    return Runs.of(MONDAY.timestamp() + HOURS * 3600.0, log)


def last_day(noise: np.ndarray, level: float) -> np.ndarray:
    """The noise with the last day's three runs at `level` (log units), give or take 1 %."""
    out = noise.copy()
    out[-3:] = level + np.array([0.01, -0.01, 0.0])
    return out


@pytest.mark.parametrize("seed", range(5))
def test_a_day_of_the_slow_tail_is_not_a_regression(seed):
    runs = runs_of(last_day(slow_tail(seed), SLOW))
    test = assess_series(runs, now=float(runs.t[-1]), rule=RULE, config=CONFIG)
    [judgement] = judge([test], CONFIG)
    day = next(a for a in test.arms if a.name == DAY_ARM)
    assert day.shift / day.sd > 3.5  # as sure as a normal series' −10 % step
    assert min(a.p_value for a in test.arms) > CONFIG.p_value
    assert judgement.verdict != Verdict.POSITIVE


@pytest.mark.parametrize("seed", range(5))
def test_a_step_on_the_same_series_still_is(seed):
    runs = runs_of(last_day(slow_tail(seed), math.log(0.75)))
    test = assess_series(runs, now=float(runs.t[-1]), rule=RULE, config=CONFIG)
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict == Verdict.POSITIVE


def test_the_slow_side_is_the_skewed_one():
    skewed = fit(runs_of(slow_tail(0)), min_bucket_runs=4, min_week_runs=6)
    assert skewed.worse_skew(-1.0) > 0.5  # decode: lower is worse
    assert skewed.worse_skew(1.0) == 0.0
    normal = fit(
        runs_of(np.random.default_rng(0).normal(0, 0.03, len(HOURS))),
        min_bucket_runs=4,
        min_week_runs=6,
    )
    assert normal.worse_skew(-1.0) == normal.worse_skew(1.0) == 0.0


def test_without_skew_the_p_value_is_students():
    assert p_value(0.1, 0.03, 20) == pytest.approx(float(special.stdtr(20, -0.1 / 0.03)))
    assert p_value(0.1, 0.03, 20, skew=0.5) > p_value(0.1, 0.03, 20)
    # Below z = 1 the correction has not started; it grows continuously from there
    assert p_value(0.02, 0.03, 20, skew=0.5) == p_value(0.02, 0.03, 20)
    assert p_value(0.0301, 0.03, 20, skew=0.5) == pytest.approx(p_value(0.0301, 0.03, 20), rel=1e-3)


def test_a_mean_of_m_runs_is_less_skewed_by_the_root_of_m():
    assert arm_skew(np.full(4, 0.25), 1.2) == pytest.approx(0.6)
    assert arm_skew(np.full(4, 0.25), -1.2) == 0.0
