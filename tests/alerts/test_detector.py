"""The detector on plain arrays (no database): runs as the unit of evidence, the baseline model
(time of day, weekend, noise, autocorrelation), each arm on data whose answer is known by hand,
Benjamini–Hochberg across arms, the frozen baseline, and the hysteresis."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from scipy import stats

from alerts.detection.arms import arm, mean_coefficients, suffix_means
from alerts.detection.baseline import Baseline, fit
from alerts.detection.detector import (
    DAY_ARM,
    LONG_ARM,
    SINCE_ARM,
    TREND_ARM,
    Arm,
    Judgement,
    SeriesTest,
    Verdict,
    assess_series,
    benjamini_hochberg,
    describe,
    judge,
)
from alerts.detection.hysteresis import Streak, Transition, advance
from alerts.detection.noise import mean_inflation
from alerts.detection.recovery import Opened
from alerts.detection.rules import DECODE, TTFT, DetectorConfig
from alerts.detection.runs import Runs
from alerts.detection.state_space import STATE_ARM

CONFIG = DetectorConfig()
DECODE_RULE, TTFT_RULE = CONFIG.rules[DECODE], CONFIG.rules[TTFT]
MONDAY = datetime(2026, 3, 9, tzinfo=UTC)
HOURS = (2, 10, 18)  # buckets 0, 1 and 3
# Small, fixed run-to-run noise (log units) so every figure can be worked out by hand.
WOBBLE = np.array([0.04, -0.04, 0.02, -0.02, 0.0, 0.03, -0.03])


def slots(days: float, *, end: datetime) -> list[datetime]:
    start = end - timedelta(days=days)
    out, day = [], start.replace(hour=0)
    while day <= end:
        out += [day.replace(hour=h) for h in HOURS if start < day.replace(hour=h) <= end]
        day += timedelta(days=1)
    return out


def series(end: datetime, level, *, days: float = 21, wobble: float = 1.0) -> tuple[Runs, float]:
    """Runs every 8 h up to `end` with log value log(level(slot)) + wobble; and `now`."""
    times = slots(days, end=end)
    logs = [math.log(level(s)) + wobble * WOBBLE[i % len(WOBBLE)] for i, s in enumerate(times)]
    return Runs.of([s.timestamp() for s in times], logs), end.timestamp()


def step(at: datetime, before: float, after: float):
    return lambda s: after if s >= at else before


def test_it_reduces_samples_to_one_value_per_run_with_its_slot_bucket_and_weekend() -> None:
    saturday_18 = datetime(2026, 3, 14, 18, tzinfo=UTC).timestamp()
    monday_02 = datetime(2026, 3, 16, 2, tzinfo=UTC).timestamp()
    runs = Runs.from_samples(
        [70, 50, 90, 0, 60, 10, 20, 30, 40],
        [monday_02] * 4 + [saturday_18] * 5,
    )
    assert list(runs.t) == [saturday_18, monday_02]  # sorted by time
    # A run's value is the trimmed mean of its logs: of five samples the middle three (20, 30
    # and 40: their geometric mean), of three the middle one. The 0 tok/s sample is no sample.
    assert np.exp(runs.log_value) == pytest.approx([(20 * 30 * 40) ** (1 / 3), 70])
    assert list(runs.bucket) == [3, 0]
    assert list(runs.weekend) == [True, False]


def test_it_fits_time_of_day_and_weekend_levels_and_the_noise_of_each_slot() -> None:
    evening, weekend = 0.8, 1.25  # evenings 20 % slower, weekends 25 % faster

    def level(s: datetime) -> float:
        return 70 * (evening if s.hour == 18 else 1) * (weekend if s.weekday() >= 5 else 1)

    runs, _ = series(MONDAY, level, days=14)
    model = fit(runs, min_bucket_runs=4, min_week_runs=6)
    assert model.fitted_week
    assert math.exp(model.level) == pytest.approx(70, rel=0.03)
    assert model.time_of_day[3] - model.time_of_day[0] == pytest.approx(math.log(0.8), abs=0.03)
    assert model.weekend == pytest.approx(math.log(1.25), abs=0.03)
    assert 0.015 < model.overall_scale < 0.05  # the wobble's spread, not the profile's
    assert Baseline.from_dict(model.as_dict()) == model


def test_it_does_not_take_a_young_series_for_quieter_than_it_is() -> None:
    # Four days of runs: three slots, each level fitted on the slot's own four runs. Their
    # residuals sit closer to those levels than the next runs will; read naively they show
    # about a fifth less variance than there is, and a young series alerts on its noise.
    end = MONDAY + timedelta(days=3, hours=18)
    times = [s.timestamp() for s in slots(4, end=end)]
    rng = np.random.default_rng(5)
    sigma = 0.05
    overall, per_slot = [], []
    for _ in range(400):
        runs = Runs.of(times, math.log(70) + rng.normal(0, sigma, len(times)))
        model = fit(runs, min_bucket_runs=4, min_week_runs=6)
        assert len(model.time_of_day) == 3 and min(model.counts.values()) == 4
        overall.append(model.overall_scale**2)
        per_slot.extend(scale**2 for scale in model.scale.values())
    assert np.mean(overall) / sigma**2 == pytest.approx(1, abs=0.1)
    assert np.mean(per_slot) / sigma**2 == pytest.approx(1, abs=0.1)


def test_it_levels_a_skewed_series_at_its_mean_run_and_counts_its_tail_in_the_noise() -> None:
    # One run in five meets a slow replica, 20 % slower: the median run is a fast one. The
    # arms average runs, so a level at the median would make every window read 4 % worse
    # than its baseline, and a scale read from the fast runs alone would be far too sure.
    end = MONDAY + timedelta(days=31, hours=18)
    times = [s.timestamp() for s in slots(32, end=end)]
    index = np.arange(len(times))
    logs = math.log(70) + 0.5 * WOBBLE[index % len(WOBBLE)] + math.log(0.8) * (index % 5 == 3)
    runs = Runs.of(times, logs)
    model = fit(runs, min_bucket_runs=4, min_week_runs=6)
    assert model.expected(runs).mean() == pytest.approx(logs.mean(), abs=0.005)
    assert logs.mean() < np.median(logs) - 0.03  # the mean and the median run do differ
    assert model.overall_scale == pytest.approx(np.std(logs), rel=0.15)
    # One outage-slowed run (a third of the speed) barely moves the levels.
    outage = logs.copy()
    outage[40] = math.log(70 / 3)
    moved = fit(Runs.of(times, outage), min_bucket_runs=4, min_week_runs=6)
    assert np.abs(moved.expected(runs) - model.expected(runs)).max() < 0.02


def test_it_inflates_the_variance_of_a_mean_for_autocorrelation() -> None:
    assert mean_inflation(1, 0.8) == 1.0
    assert mean_inflation(2, 0.5) == pytest.approx(1 + 2 * 0.5 * 0.5)
    assert mean_inflation(3, 0.5) == pytest.approx(1 + 2 * (2 / 3 * 0.5 + 1 / 3 * 0.25))


def test_it_raises_the_bar_for_a_series_whose_noise_drifts() -> None:
    # r_j = ρ φ^(j−1): a slowly drifting shared part under independent noise.
    assert mean_inflation(3, 0.3, 0.8) == pytest.approx(1 + 2 * (2 / 3 * 0.3 + 1 / 3 * 0.24))
    end = MONDAY + timedelta(days=20, hours=18)
    rng = np.random.default_rng(3)
    n = len(slots(21, end=end))
    iid = rng.normal(0, 0.05, n)
    drift = np.zeros(n)
    for i in range(1, n):  # AR(1), φ = 0.9, same marginal spread as iid
        drift[i] = 0.9 * drift[i - 1] + rng.normal(0, 0.05 * math.sqrt(1 - 0.81))
    sds = {}
    for name, noise in (("iid", iid), ("drift", drift)):
        times = slots(21, end=end)
        runs = Runs.of([s.timestamp() for s in times], math.log(70) + noise)
        test = assess_series(runs, now=end.timestamp(), rule=DECODE_RULE, config=CONFIG)
        sds[name] = {arm.name: arm.sd for arm in test.arms}[LONG_ARM]
        assert (test.baseline.rho > 0.5) == (name == "drift")
    assert sds["drift"] > 1.5 * sds["iid"]  # its own history says a 3-day mean wanders more


def test_it_finds_a_30_percent_decode_step_in_the_last_day_and_bounds_it() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    runs, now = series(end, step(end - timedelta(hours=20), 70.0, 49.0))
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    assert test.enough and test.n_recent == 3
    arms = {arm.name: arm for arm in test.arms}
    assert rules_fraction(arms[DAY_ARM].shift) == pytest.approx(0.30, abs=0.03)
    assert test.ci_low < 0.30 < test.ci_high and test.shift == pytest.approx(0.30, abs=0.03)
    assert test.baseline_median == pytest.approx(70, rel=0.03)
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict == Verdict.POSITIVE and judgement.severity == "major"


def test_it_reads_a_step_seen_in_the_last_two_runs_sooner_than_the_days_mean() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    runs, now = series(end, step(end - timedelta(hours=10), 70.0, 49.0))  # two slow runs
    arms = {
        arm.name: arm for arm in assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG).arms
    }
    assert rules_fraction(arms["last 2 runs"].shift) == pytest.approx(0.30, abs=0.03)
    assert rules_fraction(arms[DAY_ARM].shift) == pytest.approx(0.20, abs=0.04)  # 2 of 3
    assert arms["last 2 runs"].p_value < arms[DAY_ARM].p_value


def rules_fraction(log_shift: float) -> float:
    return DECODE_RULE.worse_fraction(log_shift)


def test_it_reads_a_step_in_all_its_runs_since_the_change_not_only_the_last_days() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    onset = end - timedelta(hours=28)  # four runs ago: 18:00, 02:00, 10:00, 18:00
    runs, now = series(end, step(onset, 70.0, 49.0))
    arms = {a.name: a for a in assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG).arms}
    since = arms[SINCE_ARM]
    assert since.n == 4 and since.shift == pytest.approx(math.log(70 / 49), abs=0.03)
    # Four runs are surer than the day's three, even after paying for the three k it tried.
    assert arms[DAY_ARM].n == 3 and since.p_value < arms[DAY_ARM].p_value


def test_it_does_not_call_a_monday_slower_because_the_baseline_holds_fast_weekends() -> None:
    def level(s: datetime) -> float:
        return 70 * (1.25 if s.weekday() >= 5 else 1)

    now_at = MONDAY + timedelta(days=14, hours=18)  # the last day is a Monday
    runs, now = series(now_at, level)
    modelled = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    assert abs(modelled.shift) < 0.03 and judge([modelled], CONFIG)[0].verdict == Verdict.CLEAR
    unmodelled = DetectorConfig(min_week_runs=10_000)  # never estimate the weekend
    pooled = assess_series(runs, now=now, rule=DECODE_RULE, config=unmodelled)
    assert pooled.shift > modelled.shift + 0.015  # the pooled median leans to the weekend


def test_it_learns_a_weekly_cycle_beyond_the_weekend_and_compares_like_days() -> None:
    # Wednesdays and Thursdays 10 % slower (a mid-week busy spell), weekends as weekdays: the
    # weekend alone cannot describe it, so without day-of-week effects every Thursday reads
    # slower than the baseline's average day.
    def level(s: datetime) -> float:
        return 70 * (0.9 if s.weekday() in (2, 3) else 1)

    now_at = MONDAY + timedelta(days=31, hours=18)  # a Thursday evening
    runs, now = series(now_at, level, days=34)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    model = test.baseline
    thursday, monday = (Runs.of([(now_at - timedelta(days=d)).timestamp()], [0.0]) for d in (0, 3))
    ratio = math.exp(model.expected(thursday)[0] - model.expected(monday)[0])
    assert ratio == pytest.approx(0.9, abs=0.015)
    assert abs(test.shift) < 0.03 and judge([test], CONFIG)[0].verdict == Verdict.CLEAR
    assert Baseline.from_dict(model.as_dict()) == model
    unmodelled = DetectorConfig(min_week_runs=10_000)  # never estimate the week
    pooled = assess_series(runs, now=now, rule=DECODE_RULE, config=unmodelled)
    assert pooled.shift > 0.06


def test_it_keeps_no_weekly_cycle_where_days_differ_only_by_chance() -> None:
    # 5 % noise and no weekly cycle: each day's mean residual over four weeks is off by about
    # 1.4 % by chance; shrunk by how much of the days' spread that explains, next to nothing
    # is left, so a young weekday effect does not move the bar at random.
    end = MONDAY + timedelta(days=28, hours=18)
    times = [s.timestamp() for s in slots(28, end=end)]
    for seed in range(5):
        noise = np.random.default_rng(seed).normal(0, 0.05, len(times))
        model = fit(Runs.of(times, math.log(70) + noise), min_bucket_runs=4, min_week_runs=6)
        assert all(abs(effect) < 0.01 for effect in model.day.values())


def test_it_catches_a_slowdown_in_one_slot_only_with_that_slots_arm() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    onset = end - timedelta(hours=70)

    def level(s: datetime) -> float:
        return 49.0 if s >= onset and s.hour == 18 else 70.0

    runs, now = series(end, level)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict == Verdict.POSITIVE and judgement.arm == "slot 18–24 UTC"
    arms = {arm.name: arm for arm in test.arms}
    assert rules_fraction(arms["slot 18–24 UTC"].shift) == pytest.approx(0.30, abs=0.03)
    # Pooled, the same runs are a third as bad: the 72 h arm sees about a 11 % shift.
    assert rules_fraction(arms[LONG_ARM].shift) == pytest.approx(1 - 0.7 ** (1 / 3), abs=0.03)


def test_it_needs_a_slowdown_in_one_slot_only_to_be_half_as_large_again() -> None:
    # Three runs of one slot against that slot's level are the arms most often fooled by two
    # unlucky runs: a slowdown confined to one time of day alerts from 15 % (1.5 × the
    # minimum effect), not from 8 %. 12 % in the evening only is sure, and not enough.
    end = MONDAY + timedelta(days=20, hours=18)
    onset = end - timedelta(hours=70)

    def level(s: datetime) -> float:
        return 70 * 0.88 if s >= onset and s.hour == 18 else 70.0

    runs, now = series(end, level, wobble=0.25)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    slot = {arm.name: arm for arm in test.arms}["slot 18–24 UTC"]
    assert rules_fraction(slot.shift) == pytest.approx(0.12, abs=0.01)
    assert slot.p_value < CONFIG.p_value
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict != Verdict.POSITIVE
    [looser] = judge([test], replace(CONFIG, slot_effect_gate=0.8))
    assert looser.verdict == Verdict.POSITIVE and looser.arm == "slot 18–24 UTC"


def test_it_reads_a_straight_drift_at_its_current_level() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    start = end - timedelta(days=6)

    def level(s: datetime) -> float:
        days = max((s - start).total_seconds() / 86_400, 0)
        return 70 * math.exp(-0.02 * days)  # 2 % a day, log-linear

    # Six runs a day: against a frozen baseline the line runs through the last 72 h only, and
    # needs 12 runs (a line read at its end leans on its last run).
    times = [end - timedelta(hours=4 * k) for k in range(6 * 21)][::-1]
    runs = Runs.of([s.timestamp() for s in times], [math.log(level(s)) for s in times])
    model = fit(runs.between(0, start.timestamp()), min_bucket_runs=4, min_week_runs=6)
    assert math.exp(model.level) == pytest.approx(70)
    test = assess_series(runs, now=end.timestamp(), rule=DECODE_RULE, config=CONFIG, frozen=model)
    arms = {arm.name: arm for arm in test.arms}
    # A line through residuals that lie on a line is that line: six days of 2 % now, while
    # the last three days' average trails at 4.5 days' worth.
    assert arms[TREND_ARM].shift == pytest.approx(0.02 * 6)
    assert arms[LONG_ARM].shift == pytest.approx(0.02 * 4.5, abs=0.005)


def test_it_needs_the_minimum_effect_and_a_floor_that_scales_with_the_endpoint() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    onset = end - timedelta(hours=60)
    cases = [
        # (rule, before, after, expected verdict, why)
        (TTFT_RULE, 150.0, 195.0, Verdict.POSITIVE, "regression"),  # +30 % = 45 ms on 150 ms
        (TTFT_RULE, 600.0, 660.0, Verdict.HOLD, "< 12%"),  # +10 %: under the effect gate
        (DECODE_RULE, 5.0, 4.25, Verdict.HOLD, "tok/s < 1 tok/s"),  # 0.75 tok/s < 1 tok/s
    ]
    for rule, before, after, verdict, why in cases:
        # Without noise, significance is never in doubt: only the effect and floor decide.
        runs, now = series(end, step(onset, before, after), wobble=0.0)
        judgement = judge([assess_series(runs, now=now, rule=rule, config=CONFIG)], CONFIG)[0]
        assert judgement.verdict == verdict and why in judgement.reason, (rule.metric, judgement)


def test_it_says_nothing_on_too_few_runs() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    runs, now = series(end, lambda s: 70.0, days=5)  # 2 days of baseline: 6 runs < 12
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    assert not test.enough and judge([test], CONFIG)[0].verdict == Verdict.NO_DATA
    assert "runs: too few" in judge([test], CONFIG)[0].reason


def hourly(days: float, *, end: datetime, level, seed: int = 1) -> tuple[Runs, float]:
    """Runs every hour up to `end` with log value log(level(slot)) plus noise of 5 %; and now."""
    times = [end - timedelta(hours=h) for h in range(int(days * 24))][::-1]
    noise = np.random.default_rng(seed).normal(0, 0.05, len(times))
    logs = [math.log(level(s)) for s in times] + noise
    return Runs.of([s.timestamp() for s in times], logs), end.timestamp()


def test_it_needs_a_baseline_spread_over_days_not_only_enough_runs() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    # Hourly runs for 5 days: 48 of them before the 72 h window, in two days.
    runs, now = hourly(5, end=end, level=lambda s: 70.0)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict == Verdict.NO_DATA
    assert judgement.reason == "48 baseline runs over 2.0 days: too short (they need 3 days)"
    runs, now = hourly(6.2, end=end, level=lambda s: 70.0)  # three days and a bit
    assert assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG).enough


def daily(days: int, *, end: datetime, level, seed: int = 2) -> tuple[Runs, float]:
    """One run a day at `end`'s time, with noise of 5 %; and now."""
    times = [end - timedelta(days=d) for d in range(days)][::-1]
    noise = np.random.default_rng(seed).normal(0, 0.05, len(times))
    logs = [math.log(level(s)) for s in times] + noise
    return Runs.of([s.timestamp() for s in times], logs), end.timestamp()


def test_it_tests_a_series_that_runs_once_a_day_on_its_last_runs_never_on_one_run() -> None:
    end = MONDAY + timedelta(days=40, hours=10)
    # Three slow days in a row: one run in the last day, three in the 72 h window.
    runs, now = daily(40, end=end, level=step(end - timedelta(days=2), 70.0, 52.5))
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    assert test.enough and test.n_recent == 1
    # The long window reaches back past 72 h to hold six runs: three slow days among them.
    assert {arm.name: arm.n for arm in test.arms}[LONG_ARM] == 6
    [judgement] = judge([test], CONFIG)
    # (Surest on the last two: a day holds one run, so "last 2 runs" is an arm of its own.)
    # (or on the state-space arm: the runs since the step against the level before it).
    assert judgement.verdict == Verdict.POSITIVE and judgement.arm in ("last 2 runs", STATE_ARM)
    # One slow day is one run: however sure, it never carries an arm.
    runs, now = daily(40, end=end, level=step(end, 70.0, 52.5))
    [judgement] = judge([assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)], CONFIG)
    assert judgement.verdict == Verdict.HOLD and "one run carries it" in judgement.reason


def test_it_asks_more_of_each_evaluation_of_a_series_that_runs_more_often() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    runs, now = hourly(18, end=end, level=step(end - timedelta(hours=12), 70.0, 59.5))
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    # Evaluated 24 times a day, eight times as often as the 3 a day its p-value is set for:
    # every arm's p-value is eight times what it would be on a schedule of 24 runs a day.
    as_set = assess_series(runs, now=now, rule=DECODE_RULE, config=replace(CONFIG, runs_per_day=24))
    for each, plain in zip(test.arms, as_set.arms, strict=True):
        assert each.p_value == pytest.approx(min(1.0, 8 * plain.p_value)), each.name
    # Its runs pay for it: twelve hours after a −15 % step the runs since it show it.
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict == Verdict.POSITIVE and judgement.arm in (SINCE_ARM, STATE_ARM)


def test_it_reads_every_window_that_ends_now_at_once_as_the_arms_do() -> None:
    end = MONDAY + timedelta(days=34, hours=18)
    rng = np.random.default_rng(4)
    times = slots(35, end=end)
    drift = np.zeros(len(times))
    for i in range(1, len(times)):
        drift[i] = 0.7 * drift[i - 1] + rng.normal(0, 0.04)
    cycle = [0.06 * math.sin(2 * math.pi * (s.weekday() + s.hour / 24) / 7) for s in times]
    runs = Runs.of([s.timestamp() for s in times], math.log(70) + drift + np.array(cycle))
    baseline = fit(
        runs.between(0, end.timestamp() - 3 * 86_400), min_bucket_runs=4, min_week_runs=6
    )
    assert baseline.rho > 0.3 and baseline.day_var  # correlated runs and a weekly cycle
    last = runs.between(end.timestamp() - 3 * 86_400, end.timestamp())
    resid = baseline.expected(last) - last.log_value  # decode: slower is worse
    shifts, sds = suffix_means(last, resid, baseline)
    assert len(shifts) == len(last) == 9
    for k in range(1, 10):
        window = last.where(np.arange(9) >= 9 - k)
        one = arm("k", mean_coefficients(window, baseline), resid[-k:], window, baseline)
        assert (shifts[k - 1], sds[k - 1]) == pytest.approx((one.shift, one.sd)), k


def test_it_keeps_a_lasting_step_open_against_the_frozen_baseline() -> None:
    onset = MONDAY + timedelta(days=16, hours=1)
    # The sliding baseline (CONFIG.baseline_days before the long window) now holds only the
    # new level.
    end = onset + timedelta(days=CONFIG.baseline_days + 5)
    runs, now = series(end, step(onset, 70.0, 52.5), days=CONFIG.baseline_days + 22)
    sliding = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    assert judge([sliding], CONFIG)[0].verdict == Verdict.CLEAR  # absorbed: "back to normal"
    frozen = fit(runs.between(0, onset.timestamp()), min_bucket_runs=4, min_week_runs=6)
    held = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG, frozen=frozen)
    assert held.frozen and held.shift == pytest.approx(0.25, abs=0.03)
    assert judge([held], CONFIG)[0].verdict == Verdict.POSITIVE


def test_it_is_back_to_normal_once_a_short_dip_has_passed_but_not_while_it_recurs() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    dip = end - timedelta(hours=16)  # one of the last day's three runs was 40 % slower
    runs, now = series(end, lambda s: 42.0 if s == dip else 70.0)
    frozen = fit(runs.between(0, now - 72 * 3600), min_bucket_runs=4, min_week_runs=6)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG, frozen=frozen)
    # One run far out of line is a spike: no arm carries it for the next three days.
    assert all(arm.n == 8 for arm in test.arms if arm.name == LONG_ARM)
    assert abs(test.shift) < 0.05 and judge([test], CONFIG)[0].verdict == Verdict.CLEAR
    # The same slot slow again a day later: a pattern, not a spike.
    again = dip - timedelta(hours=24)
    runs, now = series(end, lambda s: 42.0 if s in (dip, again) else 70.0)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG, frozen=frozen)
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict == Verdict.POSITIVE and judgement.arm.startswith("slot")


def test_it_says_back_to_normal_only_when_the_runs_are_surely_back_from_the_alerts_effect():
    onset = MONDAY + timedelta(days=16, hours=1)
    end = onset + timedelta(days=3)
    frozen = fit(series(onset, lambda s: 70.0, wobble=2.0)[0], min_bucket_runs=4, min_week_runs=6)
    open_twice_clear = Streak(clears=1, is_open=True)

    def verdict_on(level, *, alert_effect, opened_at=None):
        runs, now = series(end, level, wobble=2.0)
        opened = Opened(DECODE_RULE.log_shift(alert_effect), at=opened_at)
        assert Opened.from_dict(opened.as_dict()) == opened  # as Alert.opened_on keeps it
        test = assess_series(
            runs, now=now, rule=DECODE_RULE, config=CONFIG, frozen=frozen, opened=opened
        )
        [judgement] = judge([test], CONFIG)
        transition = advance(
            open_twice_clear, judgement.verdict, CONFIG, recovered=judgement.recovered
        )[1]
        return judgement, transition

    # An alert on a 10 % slowdown; two days of it, then a day that reads only 3 % slower:
    # within half the effect, "clear", but the runs cannot tell that from the same regression
    # still there, and the alert stays open.
    lucky_day = end - timedelta(hours=24)
    lasting, transition = verdict_on(
        lambda s: 70.0 if s < onset else (68.0 if s > lucky_day else 63.0), alert_effect=0.10
    )
    assert lasting.verdict == Verdict.CLEAR and not lasting.recovered, lasting
    assert "not yet surely back from 10.0% worse" in lasting.reason and transition is None
    # Back at 70 for the last day (three runs): still too few to tell a 10 % step from none...
    back_since = end - timedelta(hours=20)
    back_a_day = lambda s: 63.0 if onset <= s < back_since else 70.0  # noqa: E731
    small, transition = verdict_on(back_a_day, alert_effect=0.10)
    assert small.verdict == Verdict.CLEAR and not small.recovered and transition is None
    # ...but plenty to tell the same runs from a 40 % slowdown still there: that alert resolves.
    large, transition = verdict_on(back_a_day, alert_effect=0.40)
    assert large.verdict == Verdict.CLEAR and large.recovered, large
    assert transition == Transition.RESOLVE
    # An alert that opened on a lucky 40 % estimate of what stayed a 10 % slowdown: the same
    # day is told apart from the 10 % the series stayed at since it opened, not from 40 %...
    opened_at = (onset + timedelta(hours=17)).timestamp()
    lucky, transition = verdict_on(back_a_day, alert_effect=0.40, opened_at=opened_at)
    assert lucky.verdict == Verdict.CLEAR and not lucky.recovered and transition is None
    assert "not yet surely back from 10." in lucky.reason, lucky.reason
    # ...while one whose series has been back since it opened is judged on its 40 %.
    since_opened = lambda s: 63.0 if onset <= s < onset + timedelta(hours=17) else 70.0  # noqa: E731
    over, transition = verdict_on(since_opened, alert_effect=0.40, opened_at=opened_at)
    assert over.verdict == Verdict.CLEAR and over.recovered and transition == Transition.RESOLVE
    # Back at 70 for the last two days: surely back from 10 % too.
    back_since = onset + timedelta(hours=16)
    back, transition = verdict_on(
        lambda s: 63.0 if onset <= s < back_since else 70.0, alert_effect=0.10
    )
    assert back.verdict == Verdict.CLEAR and back.recovered, back
    assert transition == Transition.RESOLVE


def test_it_judges_a_one_slot_slowdown_back_on_that_slots_runs() -> None:
    onset = MONDAY + timedelta(days=16, hours=1)
    end = onset + timedelta(days=4)
    frozen = fit(series(onset, lambda s: 70.0)[0], min_bucket_runs=4, min_week_runs=6)
    in_slot = Opened(DECODE_RULE.log_shift(0.25), bucket=3)  # the 18:00 runs, 30 % slower

    def recovered(level, opened):
        runs, now = series(end, level)
        test = assess_series(
            runs, now=now, rule=DECODE_RULE, config=CONFIG, frozen=frozen, opened=opened
        )
        return test.recovered

    # Still slow at 18:00 only: the runs of all slots together are 10 % slower, far enough
    # from 25 % to read as back; the slot's own runs say otherwise (and so does the slot's
    # newest run when a pooled arm opened it).
    slow_at_18 = lambda s: 49.0 if s >= onset and s.hour == 18 else 70.0  # noqa: E731
    assert recovered(slow_at_18, Opened(in_slot.effect)) is False
    assert recovered(slow_at_18, in_slot) is False
    # The slot back for its last two runs (two days): surely back.
    back = end - timedelta(days=2)
    assert recovered(lambda s: 49.0 if onset <= s < back and s.hour == 18 else 70.0, in_slot)


SLOT_ONSET = MONDAY + timedelta(days=16, hours=1)  # the 18:00 runs slow from this day on


def slow_at_18(level: float, *, until: datetime | None = None):
    """70 tok/s, the 18:00 runs at `level` from SLOT_ONSET (until `until`, when given)."""
    return lambda s: (
        level if s >= SLOT_ONSET and s.hour == 18 and (until is None or s < until) else 70.0
    )


def judged_pooled(level, *, effect: float, opened_at: datetime, end: datetime) -> Judgement:
    """The verdict at `end` of a decode alert a pooled arm opened at `opened_at` on `effect`,
    against the baseline of steady runs up to SLOT_ONSET, frozen when it opened."""
    frozen = fit(series(SLOT_ONSET, lambda s: 70.0)[0], min_bucket_runs=4, min_week_runs=6)
    opened = Opened(DECODE_RULE.log_shift(effect), None, opened_at.timestamp())
    runs, now = series(end, level, days=30)
    test = assess_series(
        runs, now=now, rule=DECODE_RULE, config=CONFIG, frozen=frozen, opened=opened
    )
    return judge([test], CONFIG)[0]


def test_it_keeps_a_pooled_arms_alert_open_while_one_slot_is_still_slower() -> None:
    # The 18:00 runs 30 % slower since a day; a pooled arm opened the alert on a 10 % effect.
    # The next morning the last day's pooled runs read back (the slowed slot's one run taken
    # for a spike that is over), but that slot's newest run is still 30 % slower.
    opened_at = SLOT_ONSET + timedelta(hours=17)
    when = {"effect": 0.10, "opened_at": opened_at, "end": opened_at + timedelta(hours=16)}
    slot_slow = judged_pooled(slow_at_18(49.0), **when)
    assert slot_slow.verdict == Verdict.CLEAR and not slot_slow.recovered, slot_slow
    # The slot back too: nothing holds it open.
    back = judged_pooled(slow_at_18(49.0, until=opened_at), **when)
    assert back.recovered, back


def test_it_keeps_a_pooled_arms_alert_open_while_a_slot_is_slower_by_less_than_it_opened_on():
    # A pooled arm opened on a 30 % effect (a lucky pair of the slowed slot's runs), and the
    # 18:00 runs are 27 % slower: below the effect it opened on, but far beyond half of it and
    # beyond the slot's noise. A run 27 % slower is not a slot that is back.
    opened_at = SLOT_ONSET + timedelta(hours=17)
    when = {"effect": 0.30, "opened_at": opened_at, "end": opened_at + timedelta(hours=16)}
    slower = judged_pooled(slow_at_18(70.0 * 0.73), **when)
    assert slower.verdict == Verdict.CLEAR and not slower.recovered, slower
    # Its newest run within the noise of the baseline: back.
    back = judged_pooled(slow_at_18(70.0 * 0.73, until=opened_at), **when)
    assert back.recovered, back


def test_it_keeps_a_pooled_arms_alert_open_when_the_slower_slot_ran_just_before_it_opened():
    # The 18:00 runs 30 % slower; the alert opened at the 02:00 run after one of them (the
    # last two runs' arm), so that slot has no run since the alert opened. At 10:00 the last
    # day's pooled runs read back (its 18:00 run taken for a spike), but the slot's newest run
    # is still 30 % slower: that is what the alert opened on, and it has not been measured again.
    opened_at = SLOT_ONSET + timedelta(hours=25)  # 02:00 the next day, after the 18:00 run
    slower = judged_pooled(
        slow_at_18(49.0), effect=0.20, opened_at=opened_at, end=opened_at + timedelta(hours=8)
    )
    assert slower.verdict == Verdict.CLEAR and not slower.recovered, slower


def test_it_counts_the_first_run_of_a_step_at_once_and_discounts_a_spike_once_contradicted():
    end = MONDAY + timedelta(days=20, hours=18)
    baseline = fit(
        series(end - timedelta(hours=72), lambda s: 70.0)[0], min_bucket_runs=4, min_week_runs=6
    )
    # The latest run 40 % slower: nothing has contradicted it yet, so every arm carries it.
    runs, now = series(end, lambda s: 42.0 if s == end else 70.0)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG, frozen=baseline)
    assert all(arm.n == 9 for arm in test.arms if arm.name == LONG_ARM)
    assert {a.name: a for a in test.arms}[DAY_ARM].shift > 0.1
    # A run later, back to 70: that run is a spike the 72 h arm leaves out.
    later = end + timedelta(hours=8)
    runs, now = series(later, lambda s: 42.0 if s == end else 70.0)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG, frozen=baseline)
    assert all(arm.n == 8 for arm in test.arms if arm.name == LONG_ARM)


def test_it_never_opens_on_one_bad_run_however_sure_its_p() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    # The latest run 40 % slower, the rest as usual: the last-day arm is sure of a shift, but
    # without that one run there is none. One bad run is a dip until another agrees.
    runs, now = series(end, lambda s: 42.0 if s == end else 70.0)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    day = {a.name: a for a in test.arms}[DAY_ARM]
    assert day.p_value < CONFIG.p_value and rules_fraction(day.without_worst) < 0.05
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict != Verdict.POSITIVE
    # The run before it slow too: two runs are a step.
    runs, now = series(end, lambda s: 42.0 if s >= end - timedelta(hours=8) else 70.0)
    [judgement] = judge([assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)], CONFIG)
    assert judgement.verdict == Verdict.POSITIVE


def test_it_never_reads_the_first_slow_run_of_a_step_as_back_to_normal() -> None:
    # The latest run 40 % slower: nothing has contradicted it yet, so "back to normal" must not
    # take it for a spike that is over. A "clear" there would reset the count toward opening
    # (a positive before it, e.g. a slot's arm, would start again from nothing).
    end = MONDAY + timedelta(days=20, hours=18)
    runs, now = series(end, lambda s: 42.0 if s == end else 70.0)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    assert test.settled > DECODE_RULE.min_effect / 2, f"the last day read {test.settled:.1%}"
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict == Verdict.HOLD, judgement
    streak, _ = advance(Streak(positives=1), judgement.verdict, CONFIG)
    assert streak.positives == 1, "the first slow run of a step reset the count toward opening"


def test_it_counts_a_positive_toward_opening_only_when_the_newest_run_agrees() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    # Two slow runs, then one as usual: the day is still surely worse, but the newest run
    # says nothing new (under skewed noise, two unlucky runs in a row read exactly so).
    runs, now = series(end, lambda s: 42.0 if end - timedelta(hours=16) <= s < end else 70.0)
    [stale] = judge([assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)], CONFIG)
    assert stale.verdict == Verdict.POSITIVE and not stale.fresh
    assert "not seen again in the newest run" in stale.reason
    runs, now = series(end, lambda s: 42.0 if s >= end - timedelta(hours=16) else 70.0)
    [fresh] = judge([assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)], CONFIG)
    assert fresh.verdict == Verdict.POSITIVE and fresh.fresh
    # Seen twice means in two runs: a positive that the newest run does not back keeps the
    # count without adding to it.
    streak, transition = advance(Streak(), Verdict.POSITIVE, CONFIG)
    streak, transition = advance(streak, Verdict.POSITIVE, CONFIG, fresh=False)
    assert transition is None and streak.positives == 1
    assert advance(streak, Verdict.POSITIVE, CONFIG)[1] == Transition.OPEN


def test_it_reads_a_positive_as_seen_again_on_every_run_since_the_last_one_that_counted():
    end = MONDAY + timedelta(days=20, hours=18)
    counted = end - timedelta(hours=16)
    # 29 % slower for two days up to the positive that counted; then three confirmation runs
    # as usual and a newest run 8 % slower: the last day is still worse, and the newest run
    # alone reads "seen again", but the runs since the counted positive are as usual.
    tail = {-20: 50.0, -16: 50.0, -12: 70.0, -8: 70.0, -4: 70.0, 0: 64.5}
    runs, _ = series(
        end - timedelta(hours=21), lambda s: 50.0 if s > end - timedelta(days=2) else 70.0
    )
    times = [*runs.t, *((end + timedelta(hours=h)).timestamp() for h in tail)]
    logs = [*runs.log_value, *(math.log(v) for v in tail.values())]
    runs, now = Runs.of(times, logs), end.timestamp()

    def judged(counted_at):
        test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG, counted_at=counted_at)
        return judge([test], CONFIG)[0]

    newest_alone = judged(None)
    assert newest_alone.verdict == Verdict.POSITIVE and newest_alone.fresh
    since_counted = judged(counted.timestamp())
    assert since_counted.verdict == Verdict.POSITIVE and not since_counted.fresh, (
        "a noise-made first positive got a new roll of the dice at every confirmation run"
    )
    assert "not seen again in the 4 runs since the last positive" in since_counted.reason
    # A step that lasts is seen again in the runs since: the count goes on.
    tail = {-20: 50.0, -16: 50.0, -12: 66.0, -8: 60.0, -4: 70.0, 0: 62.0}
    logs = [*logs[: -len(tail)], *(math.log(v) for v in tail.values())]
    runs = Runs.of(times, logs)
    assert judged(counted.timestamp()).fresh


def test_a_first_positive_is_read_at_a_looser_bar_than_the_one_that_opens() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    # Three days 11.5 % slower under three times the usual wobble: the 72 h arm is sure of it
    # at p ~ 0.0008, over the bar an alert opens at, under the first positive's looser one.
    runs, now = series(end, step(end - timedelta(hours=64), 70.0, 61.95), wobble=3.0)

    def judged(counted_at):
        test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG, counted_at=counted_at)
        return test, judge([test], CONFIG)[0]

    test, first = judged(None)
    assert CONFIG.p_value <= test.p_value < CONFIG.first_p_factor * CONFIG.p_value
    assert first.verdict == Verdict.POSITIVE and first.fresh, first.reason
    streak, transition = advance(Streak(), first.verdict, CONFIG, at=now - 8 * 3600.0)
    assert transition is None and streak.positives == 1
    # The same evidence as the positive that would open: the bar itself, so a hold that keeps
    # the count and opens nothing.
    _, second = judged(streak.positive_at)
    assert second.verdict == Verdict.HOLD and f"≥ {CONFIG.p_value:g}" in second.reason
    streak, transition = advance(streak, second.verdict, CONFIG, at=now)
    assert transition is None and streak.positives == 1
    # On a baseline under two weeks old (a drifting provider's level is known least there)
    # the first positive is read at the bar itself too.
    runs, now = series(end, step(end - timedelta(hours=64), 70.0, 61.95), days=12, wobble=3.0)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    assert CONFIG.p_value <= test.p_value < CONFIG.first_p_factor * CONFIG.p_value
    [held] = judge([test], CONFIG)
    assert held.verdict == Verdict.HOLD and f"≥ {CONFIG.p_value:g}" in held.reason


def test_a_young_baseline_needs_twice_the_effect() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    onset = end - timedelta(hours=40)

    def judged(days: float, after: float) -> tuple[SeriesTest, Judgement]:
        runs, now = series(end, step(onset, 70.0, after), days=days)
        test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
        return test, judge([test], CONFIG)[0]

    # 13 % slower for 40 hours: sure on a baseline of 18 days, and on one of 10...
    old, positive = judged(21, 60.9)
    assert not old.young and positive.verdict == Verdict.POSITIVE, positive.reason
    young, held = judged(13, 60.9)
    assert young.young and young.p_value < CONFIG.p_value
    # ...where the provider's own wandering over days is not known yet: a young baseline's
    # arms need 16 %, twice the 8 % they need otherwise.
    assert held.verdict == Verdict.HOLD and "< 16% (young baseline)" in held.reason, held.reason
    _, big = judged(13, 52.5)  # 25 % slower
    assert big.verdict == Verdict.POSITIVE, big.reason
    # A slot arm keeps its own bar there (1.5 × the effect, not 3 ×): three evenings 27 %
    # slower are a positive slot arm. A wandering provider moves every slot together.
    evenings = end - timedelta(days=3)
    runs, now = series(end, lambda s: 51.1 if s.hour == 18 and s > evenings else 70.0, days=13)
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    [slot] = judge([test], CONFIG)
    assert test.young and slot.verdict == Verdict.POSITIVE, slot.reason
    assert slot.arm == "slot 18–24 UTC"


def test_a_slot_counts_again_at_another_slots_run_unless_its_newest_run_is_far_better() -> None:
    # The newest run is at 02:00; the 18:00 slot was 40 % slower two evenings ago (a short
    # dip) and 26 % slower last evening (an unlucky run): its arm is sure of a shift, but the
    # slot's newest run is far better than the one before, as when a dip is over; the slot's
    # own next run must back it.
    end = MONDAY + timedelta(days=21, hours=2)
    before, last = MONDAY + timedelta(days=19, hours=18), MONDAY + timedelta(days=20, hours=18)

    def judged(slowed: dict) -> Judgement:
        runs, now = series(end, lambda s: slowed.get(s, 70.0))
        [judgement] = judge([assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)], CONFIG)
        assert judgement.verdict == Verdict.POSITIVE and judgement.arm == "slot 18–24 UTC"
        return judgement

    dip = judged({before: 42.0, last: 52.0})
    assert not dip.fresh and "the slot's newest run far better than the one before" in dip.reason
    # Both evenings 30 % slower (a level), or the second worse than the first: the 02:00 run
    # re-reading them counts.
    assert judged({before: 49.0, last: 49.0}).fresh
    assert judged({before: 52.0, last: 42.0}).fresh


def test_it_describes_each_time_of_day_bucket_and_when_the_change_began() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    onset = end - timedelta(hours=40)
    runs, now = series(end, step(onset, 70.0, 49.0))
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    detail = describe(runs, test.baseline, now=now, rule=DECODE_RULE, config=CONFIG)
    assert datetime.fromtimestamp(detail.onset, UTC) == min(
        s for s in slots(2, end=end) if s >= onset
    )
    rows = {row.bucket: row for row in detail.buckets}
    assert set(rows) == {0, 1, 3}
    assert rows[3].change == pytest.approx(0.30, abs=0.04)
    assert rows[3].n_baseline == test.baseline.counts[3]


def test_it_computes_benjamini_hochberg_exactly_as_scipy_does() -> None:
    rng = np.random.default_rng(1)
    for size in (1, 2, 5, 40):
        p = rng.uniform(0, 0.1, size)
        np.testing.assert_allclose(benjamini_hochberg(p), stats.false_discovery_control(p))


def test_it_corrects_for_every_arm_of_every_series_evaluated_together() -> None:
    end = MONDAY + timedelta(days=20, hours=18)
    runs, now = series(end, step(end - timedelta(hours=20), 70.0, 49.0))
    test = assess_series(runs, now=now, rule=DECODE_RULE, config=CONFIG)
    quiet_arm = Arm(DAY_ARM, 3, 0.0, 0.05, 0.9)
    quiet = SeriesTest(
        DECODE, 40, 3, True, 70.0, 70.0, 0.0, -0.05, 0.05, 0.0, 0.9, arms=(quiet_arm,), settled=0
    )
    together = judge([test, quiet], CONFIG)
    family = [a.p_value for a in test.arms] + [0.9]
    best = min(range(len(test.arms)), key=lambda k: test.arms[k].p_value)
    assert together[0].q_value == pytest.approx(benjamini_hochberg(family)[best])


def test_it_opens_after_two_positives_and_resolves_after_two_clears() -> None:
    streak = Streak()
    P, C, H, N = Verdict.POSITIVE, Verdict.CLEAR, Verdict.HOLD, Verdict.NO_DATA
    seen = []
    for verdict in (P, C, P, H, N, P, H, C, P, C, C):
        streak, transition = advance(streak, verdict, CONFIG)
        seen.append(transition)
    # P C P: a clear in between starts over; P H (no data) P: nothing said it was over -> open;
    # H C P C C: resolves only on two clears in a row, at the end.
    assert seen == [None] * 5 + [Transition.OPEN] + [None] * 4 + [Transition.RESOLVE]
    assert not streak.is_open


def test_it_keeps_a_dismissed_series_quiet_until_it_was_clear_once() -> None:
    streak = Streak(muted=True)
    for _ in range(3):
        streak, transition = advance(streak, Verdict.POSITIVE, CONFIG)
        assert transition is None
    streak, _ = advance(streak, Verdict.CLEAR, CONFIG)
    assert not streak.muted
    streak, _ = advance(streak, Verdict.POSITIVE, CONFIG)
    assert advance(streak, Verdict.POSITIVE, CONFIG)[1] == Transition.OPEN


def replay(level, *, onset: datetime, days: float, opened_after: timedelta) -> list:
    """Every run from `opened_after` past `onset` for `days`, evaluated as evaluate.py does,
    with an alert open from the first of them (frozen on the runs before `onset`); a new normal
    starts the history again where the alert opened, as its Segment does. Returns the
    transitions as (slot, transition)."""
    end = onset + timedelta(days=days)
    runs, _ = series(end, level, days=days + 21)
    first = (onset + opened_after).timestamp()
    frozen = fit(runs.between(0, onset.timestamp()), min_bucket_runs=4, min_week_runs=6)
    opened = Opened(DECODE_RULE.log_shift(0.12), None, first)
    streak, start, seen = Streak(is_open=True), 0.0, []
    for now in runs.t[runs.t >= first]:
        test = assess_series(
            runs.between(start, np.inf), now=now, rule=DECODE_RULE, config=CONFIG,
            frozen=frozen, opened=opened,
        )  # fmt: skip
        [judgement] = judge([test], CONFIG)
        streak, transition = advance(
            streak, judgement.verdict, CONFIG, recovered=judgement.recovered,
            fresh=judgement.fresh, new_normal=judgement.new_normal,
        )  # fmt: skip
        if transition == Transition.NEW_NORMAL:
            start, frozen, opened = opened.at - 1.0, None, None
        elif transition == Transition.OPEN:
            frozen, opened = test.baseline, judgement.opened
        if transition is not None:
            seen.append((datetime.fromtimestamp(now, UTC), transition))
    return seen


def test_it_closes_an_alert_the_series_never_comes_back_from_as_the_new_normal() -> None:
    # An alert opened on a 12 % estimate; the series stayed 6 % slower: never surely back from
    # 12 %, never worse by the minimum effect. It closes as the new normal a week after it
    # opened, and the series, armed again against that level, alerts on a 30 % step later.
    onset = MONDAY + timedelta(days=21, hours=1)
    opened_after = timedelta(hours=17)
    worse_step = onset + timedelta(days=12)

    def level(s: datetime) -> float:
        return 70.0 if s < onset else 66.0 if s < worse_step else 46.0

    seen = replay(level, onset=onset, days=16, opened_after=opened_after)
    kinds = [transition for _, transition in seen]
    assert kinds[:2] == [Transition.NEW_NORMAL, Transition.OPEN], seen
    closed_at, reopened_at = seen[0][0], seen[1][0]
    opened_at = onset + opened_after
    assert timedelta(days=7) <= closed_at - opened_at <= timedelta(days=8), seen
    assert worse_step < reopened_at <= worse_step + timedelta(days=1), seen


def test_it_keeps_an_alert_open_while_its_series_keeps_getting_worse() -> None:
    # A slowdown still deepening a week after the alert opened is no new level yet.
    onset = MONDAY + timedelta(days=21, hours=1)

    def level(s: datetime) -> float:
        days = max((s - onset).total_seconds() / 86_400, 0.0)
        return 70.0 * (1 - 0.03 * min(days, 12.0))

    seen = replay(level, onset=onset, days=11, opened_after=timedelta(days=2))
    assert seen == [], seen  # still open: neither resolved nor a new normal


def test_it_closes_an_open_alert_as_the_new_normal_and_counts_afresh() -> None:
    streak = Streak(positives=3, clears=1, is_open=True)
    streak, transition = advance(streak, Verdict.POSITIVE, CONFIG, new_normal=True)
    assert transition == Transition.NEW_NORMAL and streak == Streak()
    # Only an open alert closes so; no data changes nothing.
    assert advance(Streak(), Verdict.CLEAR, CONFIG, new_normal=True)[1] is None
    assert advance(Streak(is_open=True), Verdict.NO_DATA, CONFIG, new_normal=True)[1] is None


def _drifting(seed: int, days: int, *, phi: float, white: float) -> tuple[np.ndarray, np.ndarray]:
    """An hourly path of a provider's state drifting in real time (AR(1), correlation φ per
    8 h, σ 0.06) and each hour's own run noise (σ `white`), log units."""
    rng = np.random.default_rng(seed)
    decay = phi ** (1 / 8)
    path = np.zeros(days * 24)
    for i in range(1, len(path)):
        path[i] = decay * path[i - 1] + rng.normal(0, 0.06 * math.sqrt(1 - decay**2))
    return path, rng.normal(0, white, len(path))


def test_it_judges_a_schedule_changed_from_3_to_6_runs_a_day_by_the_hours_between_runs() -> None:
    # A provider whose noise is mostly a drift in real time, measured 3 times a day for a month,
    # then 6 times a day for the last three days. Runs 4 h apart share nearly all of its drift:
    # the last 3 days' mean wanders about as much at 6 runs a day as at 3, and the test must
    # say so, or the schedule change alone opens false alerts. (Before, the correlation was
    # per run: 18 runs read as twice as many independent steps of the drift as 9, and the
    # 72 h mean's standard error fell by a fifth.)
    path, white = _drifting(3, 35, phi=0.9, white=0.02)
    hours3 = np.arange(2, 35 * 24, 8)
    hours6 = np.r_[hours3[hours3 < 32 * 24], np.arange(32 * 24 + 2, 35 * 24, 4)]
    sds = {}
    for name, hours in (("3 a day", hours3), ("6 a day", hours6)):
        runs = Runs.of(
            MONDAY.timestamp() + hours * 3600.0, math.log(70) + path[hours] + white[hours]
        )
        test = assess_series(runs, now=float(runs.t[-1]), rule=DECODE_RULE, config=CONFIG)
        sds[name] = {arm.name: arm.sd for arm in test.arms}
    for name in (LONG_ARM, DAY_ARM):
        assert sds["6 a day"][name] >= 0.95 * sds["3 a day"][name], name


def test_it_does_not_alert_on_a_provider_that_only_drifts() -> None:
    # A provider whose state drifts slowly in real time (AR(1), φ 0.95 per 8 h, σ 6 %) under
    # 7 % run noise, 3 runs a day for two months, nothing changed. Its baseline shows the
    # drift (the lags, in hours, corrected for how little 28 days of it pin its mean down),
    # and the test widens by it: a month of evaluations against a full baseline opens no
    # alert. (Before, the correlation's estimate was pulled toward none by the baseline's own
    # mean, and a slow excursion 10 days into the month opened one.)
    path, white = _drifting(0, 60, phi=0.95, white=0.07)
    hours = np.arange(2, 60 * 24, 8)
    runs = Runs.of(MONDAY.timestamp() + hours * 3600.0, math.log(70) + path[hours] + white[hours])
    streak, opened = Streak(), []
    for now in runs.t[runs.t > MONDAY.timestamp() + 31 * 86_400]:
        test = assess_series(runs.between(0, now), now=now, rule=DECODE_RULE, config=CONFIG)
        [judgement] = judge([test], CONFIG)
        streak, transition = advance(
            streak, judgement.verdict, CONFIG, recovered=judgement.recovered, fresh=judgement.fresh
        )
        if transition == Transition.OPEN:
            opened.append(datetime.fromtimestamp(now, UTC))
    assert opened == []


def test_it_reads_a_run_between_the_schedules_hours_at_its_own_hour_of_the_daily_cycle() -> None:
    # Decode on a ±15 % daily cycle, slowest at 06 UTC, measured at 02, 10 and 18 UTC for three
    # weeks; the last day also has confirmation runs at 04 and 06, hours the schedule never
    # measures. Nothing changed: those runs are as slow as the cycle is at their hour. Read
    # against the level of the bucket they fall in (measured at 02 or 10, where the cycle is
    # 6–7 % faster), they made the unchanged day read a few percent slower; read on the daily
    # curve through the buckets' levels, the day is as it always was, and a 10 % step over it
    # reads 10 %.
    def cycle(s: datetime) -> float:
        return 70 * math.exp(0.15 * math.sin(2 * math.pi * (s.hour - 12) / 24))

    end = MONDAY + timedelta(days=21, hours=10)
    extra = [end - timedelta(hours=h) for h in (6, 4)]  # 04:00 and 06:00
    times = sorted(slots(21, end=end) + extra)
    for after, shift in ((1.0, 0.0), (0.9, 0.10)):
        logs = [
            math.log(cycle(s) * (after if s > end - timedelta(hours=23) else 1.0))
            + WOBBLE[i % len(WOBBLE)]
            for i, s in enumerate(times)
        ]
        runs = Runs.of([s.timestamp() for s in times], logs)
        test = assess_series(runs, now=end.timestamp(), rule=DECODE_RULE, config=CONFIG)
        day = {arm.name: arm for arm in test.arms}[DAY_ARM]
        assert day.n == 5
        assert rules_fraction(day.shift) == pytest.approx(shift, abs=0.01)


CONFIRMED_END = MONDAY + timedelta(days=21, hours=18)


def confirmed_step(slower: float, seed: int) -> tuple[list[datetime], list[datetime], Runs]:
    """Three scheduled runs a day for three weeks to CONFIRMED_END; for the last two days,
    decode `slower` (a fraction) and, while the series was suspect, confirmation runs 2, 4 and
    6 h after each scheduled run (noise σ 7 % a run, seeded): the scheduled times, every run's
    time, and the runs, the confirmation runs marked as extra."""
    scheduled = slots(21, end=CONFIRMED_END)
    onset = CONFIRMED_END - timedelta(hours=47)
    extra = [
        s + timedelta(hours=h) for s in scheduled if onset <= s < CONFIRMED_END for h in (2, 4, 6)
    ]
    times = sorted(scheduled + extra)
    noise = np.random.default_rng(seed).normal(0, 0.07, len(times))
    logs = np.log([70 * (1 - slower if s >= onset else 1.0) for s in times]) + noise
    runs = Runs.of([s.timestamp() for s in times], logs, extra=[s in extra for s in times])
    assert runs.extra.sum() == len(extra) and not runs.between(0, onset.timestamp()).extra.any()
    return scheduled, times, runs


def test_confirmation_runs_add_evidence_not_looks() -> None:
    # An 8 % step seen by the scheduled and the confirmation runs (confirmed_step). Marked as
    # extra runs, the confirmation runs count as evidence only: the arms keep the bar of three
    # evaluations a day and the step is positive. Read as a schedule of twelve runs a day,
    # every p-value is multiplied for the looks and it holds.
    _, _, marked = confirmed_step(0.08, seed=1)
    found = {}
    for name, runs in (("extra", marked), ("schedule", Runs.of(marked.t, marked.log_value))):
        test = assess_series(runs, now=CONFIRMED_END.timestamp(), rule=DECODE_RULE, config=CONFIG)
        [judgement] = judge([test], CONFIG)
        found[name] = judgement.verdict, min(a.p_value for a in test.arms)
    assert found["extra"][0] == Verdict.POSITIVE
    assert found["schedule"][0] == Verdict.HOLD
    assert found["schedule"][1] > found["extra"][1]


def test_since_the_change_reads_a_day_and_a_half_of_schedule_among_confirmation_runs() -> None:
    # A 9 % step seen by the scheduled and the confirmation runs (confirmed_step). "Since the
    # change" reads from the 4th to 6th newest scheduled run on, the confirmation runs between
    # them included: a day and a half to two days, as on a plain schedule, not the last half
    # day that the last 4–6 runs of a confirmed series are.
    scheduled, times, runs = confirmed_step(0.09, seed=3)
    test = assess_series(runs, now=CONFIRMED_END.timestamp(), rule=DECODE_RULE, config=CONFIG)
    arms = {a.name: a for a in test.arms}
    since, day = arms[SINCE_ARM], arms[DAY_ARM]
    newest_scheduled = [s for s in scheduled if s <= CONFIRMED_END][-6:]
    assert since.n in {
        sum(t >= first for t in times) for first in newest_scheduled[:3]
    }  # 4, 5 or 6 scheduled runs and the confirmation runs since the oldest of them
    assert since.n > day.n > 6
    assert since.p_value < day.p_value
