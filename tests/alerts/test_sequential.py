"""The sequential arm (issue 28): one CUSUM-like statistic per series, its bar simulated on the
series' own fitted noise model for a number of false episodes a series-month, opening an alert
alone (alerts/detection/sequential.py; docs/alerts.md)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest

from alerts.detection import sequential
from alerts.detection.baseline import Runs
from alerts.detection.detector import Verdict, assess_series, judge
from alerts.detection.hysteresis import Streak, Transition, advance
from alerts.detection.rules import DECODE, DetectorConfig

CONFIG = DetectorConfig()
ON = replace(CONFIG, sequential_episodes=0.05)
RULE = CONFIG.rules[DECODE]
MONDAY = datetime(2026, 3, 9, tzinfo=UTC)
HOURS = np.arange(2, 35 * 24, 8)  # 3 runs a day for 35 days


def runs_of(seed: int, step: float, runs_after: int) -> Runs:
    """A 70 tok/s endpoint, independent run noise (σ 0.03), the last `runs_after` runs
    slower by `step` (a fraction)."""
    noise = np.random.default_rng(seed).normal(0, 0.03, len(HOURS))
    noise[len(HOURS) - runs_after :] += math.log(1 - step)
    return Runs.of(MONDAY.timestamp() + HOURS * 3600.0, math.log(70) + noise)


def test_a_sequential_positive_opens_alone():
    streak, transition = advance(Streak(), Verdict.POSITIVE, CONFIG, alone=True, at=0.0)
    assert transition == Transition.OPEN and streak.is_open
    # ...and an ordinary positive still needs a second one
    streak, transition = advance(Streak(), Verdict.POSITIVE, CONFIG, at=0.0)
    assert transition is None and not streak.is_open


def test_the_bar_gives_the_crossings_it_was_set_for():
    """Upcrossings of the simulated bar on fresh draws of the same model: the share wanted."""
    n, first = 21, 12
    hours = np.arange(n) * 8.0
    cov = 0.5 * np.exp(-np.abs(hours[:, None] - hours[None, :]) / 24.0) + 0.5 * np.eye(n)
    wanted = 0.004
    h, _ = sequential.simulate_bar(cov, first, 0.1, wanted)
    draws = np.linalg.cholesky(cov) @ np.random.default_rng(7).standard_normal((n, 200_000))

    def stat(k, rows):
        steps = sequential._steps(k, first)
        c, info = sequential._solve(cov[:k, :k], steps)
        return sequential.statistic(c @ rows, info, 0.1)

    now, before = stat(n, draws), stat(n - 1, draws[:-1])
    share = np.mean((now > h) & (before <= h))
    assert wanted / 1.5 < share < wanted * 1.5


@pytest.mark.parametrize("seed", range(4))
def test_a_small_step_opens_on_the_sequential_arm(seed):
    """A −12 % step six runs old on quiet independent noise: over the arm's bar, the verdict
    positive and alone; without the arm it is not alone."""
    runs = runs_of(seed, 0.12, 6)
    now = float(runs.t[-1])
    [test] = [assess_series(runs, now=now, rule=RULE, config=ON)]
    arm = next(a for a in test.arms if a.name == sequential.SEQ_ARM)
    assert arm.over
    [judgement] = judge([test], ON)
    assert judgement.verdict == Verdict.POSITIVE and judgement.alone
    off = assess_series(runs, now=now, rule=RULE, config=CONFIG)
    assert all(a.name != sequential.SEQ_ARM for a in off.arms)
    assert not judge([off], CONFIG)[0].alone


@pytest.mark.parametrize("seed", range(4))
def test_normal_runs_are_under_its_bar(seed):
    runs = runs_of(seed, 0.0, 0)
    test = assess_series(runs, now=float(runs.t[-1]), rule=RULE, config=ON)
    arm = next(a for a in test.arms if a.name == sequential.SEQ_ARM)
    assert not arm.over and arm.p_value > arm.bar


def test_not_on_a_young_baseline():
    """A baseline of under 14 days: its noise model is too unsure to simulate a bar on."""
    runs = runs_of(0, 0.12, 6)
    young = runs.between(runs.t[-1] - 13 * 86_400.0, np.inf)
    test = assess_series(young, now=float(young.t[-1]), rule=RULE, config=ON)
    assert test.enough and all(a.name != sequential.SEQ_ARM for a in test.arms)
