"""When an open alert resolves (docs/alerts.md, "Opening, resolving and the new normal"): on
runs surely back and independent in real time."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np

from alerts.detection.baseline import fit
from alerts.detection.detector import assess_series, judge
from alerts.detection.hysteresis import Streak, advance
from alerts.detection.recovery import Opened
from alerts.detection.rules import DECODE, DetectorConfig
from alerts.detection.runs import Runs

CONFIG = DetectorConfig()
RULE = CONFIG.rules[DECODE]
START = datetime(2026, 3, 9, tzinfo=UTC)  # a Monday
# Small, fixed run-to-run noise (log units) so every figure can be worked out by hand.
WOBBLE = np.array([0.04, -0.04, 0.02, -0.02, 0.0, 0.03, -0.03])


def runs_at(times: list[datetime], level: Callable[[datetime], float]) -> Runs:
    logs = [math.log(level(t)) + WOBBLE[i % len(WOBBLE)] for i, t in enumerate(times)]
    return Runs.of([t.timestamp() for t in times], logs)


def scheduled(until: datetime) -> list[datetime]:
    """Runs every 8 h (02:00, 10:00, 18:00) from START up to `until`."""
    out, t = [], START + timedelta(hours=2)
    while t <= until:
        out.append(t)
        t += timedelta(hours=8)
    return out


def test_a_lasting_step_with_a_lucky_fast_run_pair_stays_open() -> None:
    onset = START + timedelta(days=21, hours=1)
    # Two days 25 % slower, then the provider is faster for an hour: the scheduled run and a
    # confirmation run an hour after it (another series of the run was suspect) both read 64.
    lucky = onset + timedelta(days=2, hours=1)
    times = scheduled(lucky) + [lucky + timedelta(hours=1)]
    level = lambda t: 64.0 if t >= lucky else (52.5 if t >= onset else 70.0)  # noqa: E731
    runs = runs_at(times, level)
    frozen = fit(runs.between(0, onset.timestamp()), min_bucket_runs=4, min_week_runs=6)
    opened = Opened(RULE.log_shift(0.25), at=(onset + timedelta(hours=9)).timestamp())
    now = runs.t[-1]
    test = assess_series(runs, now=now, rule=RULE, config=CONFIG, frozen=frozen, opened=opened)
    # One episode of the provider's, one run's evidence: not surely back from 25 % worse.
    assert test.recovered is False, test
    [judgement] = judge([test], CONFIG)
    streak = Streak(clears=1, is_open=True)
    _, transition = advance(
        streak, judgement.verdict, CONFIG, recovered=judgement.recovered, fresh=judgement.fresh
    )
    assert transition is None, judgement
