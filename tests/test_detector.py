"""The detector's statistics on plain arrays (no database): the test, the shift and its
interval, time of day, thresholds, and the hysteresis that turns verdicts into alerts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from alerts.detector import (
    SeriesTest,
    Verdict,
    Window,
    benjamini_hochberg,
    describe,
    hodges_lehmann,
    judge,
    mann_whitney_greater,
    test_series,
)
from alerts.hysteresis import Streak, Transition, advance
from alerts.rules import DECODE, TTFT, DetectorConfig

CONFIG = DetectorConfig()
DECODE_RULE, TTFT_RULE = CONFIG.rules[DECODE], CONFIG.rules[TTFT]


def windows(
    rng,
    *,
    base: float,
    recent: float,
    noise: float = 0.1,
    n_base=210,
    n_recent=15,
    cycle: dict[int, float] | None = None,
    recent_buckets=(0, 1, 3),
):
    """Baseline over buckets 0, 1, 3 and a recent window over `recent_buckets`; `cycle` scales
    each bucket's level (a time-of-day pattern)."""
    cycle = cycle or {}
    b_buckets = np.resize(np.array([0, 1, 3]), n_base)
    r_buckets = np.resize(np.array(recent_buckets), n_recent)
    level = np.vectorize(lambda b: cycle.get(int(b), 1.0))
    b_values = base * level(b_buckets) * np.exp(rng.normal(0, noise, n_base))
    r_values = recent * level(r_buckets) * np.exp(rng.normal(0, noise, n_recent))
    return Window.of(b_values, b_buckets), Window.of(r_values, r_buckets)


def test_it_computes_mann_whitney_exactly_as_scipy_does_also_with_ties() -> None:
    rng = np.random.default_rng(0)
    for trial in range(50):
        if trial % 2:  # heavy ties
            x = rng.integers(0, 6, rng.integers(8, 20)).astype(float)
            y = rng.integers(0, 6, rng.integers(30, 90)).astype(float)
        else:
            x, y = rng.normal(0.3, 1, 15), rng.normal(0, 1, 210)
        expected = stats.mannwhitneyu(x, y, alternative="greater", method="asymptotic").pvalue
        assert mann_whitney_greater(x, y) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_it_computes_benjamini_hochberg_exactly_as_scipy_does() -> None:
    rng = np.random.default_rng(1)
    for size in (1, 2, 5, 40):
        p = rng.uniform(0, 0.1, size)
        np.testing.assert_allclose(benjamini_hochberg(p), stats.false_discovery_control(p))


def test_it_gives_a_hodges_lehmann_interval_that_covers_the_true_shift_as_often_as_claimed():
    rng = np.random.default_rng(2)
    covered = 0
    trials = 400
    for _ in range(trials):
        shift, low, high = hodges_lehmann(rng.normal(0.2, 1, 15), rng.normal(0, 1, 210), level=0.9)
        assert low <= shift <= high
        covered += low <= 0.2 <= high
    assert 0.85 <= covered / trials <= 0.95


def test_it_finds_a_30_percent_decode_slowdown_and_bounds_it() -> None:
    baseline, recent = windows(np.random.default_rng(3), base=70.0, recent=49.0)
    test = test_series(baseline, recent, DECODE_RULE, CONFIG)
    assert test.enough and test.p_value < 1e-6
    assert test.ci_low <= 0.3 <= test.ci_high and test.shift == pytest.approx(0.3, abs=0.04)
    assert test.abs_shift == pytest.approx(70 * test.shift, rel=0.05)  # tok/s
    [judgement] = judge([test], CONFIG)
    assert judgement.verdict == Verdict.POSITIVE and judgement.severity == "major"


def test_it_does_not_mistake_a_time_of_day_cycle_for_a_regression() -> None:
    # Evenings are always 30 % slower; the last 24 h happen to hold only evening runs.
    cycle = {3: 0.7}
    baseline, recent = windows(
        np.random.default_rng(4), base=70.0, recent=70.0, cycle=cycle, recent_buckets=(3,)
    )
    test = test_series(baseline, recent, DECODE_RULE, CONFIG)
    assert judge([test], CONFIG)[0].verdict == Verdict.CLEAR
    # Compared with the overall median instead (no time-of-day profile), it would be flagged:
    assert np.median(recent.values) < 0.8 * np.median(baseline.values)


def test_it_says_nothing_on_too_few_samples() -> None:
    rng = np.random.default_rng(5)
    few_recent = windows(rng, base=70.0, recent=35.0, n_recent=CONFIG.min_recent - 1)
    few_base = windows(rng, base=70.0, recent=35.0, n_base=CONFIG.min_baseline - 1)
    for baseline, recent in (few_recent, few_base):
        test = test_series(baseline, recent, DECODE_RULE, CONFIG)
        assert not test.enough and judge([test], CONFIG)[0].verdict == Verdict.NO_DATA


def test_it_needs_the_minimum_effect_the_floor_and_a_confident_interval() -> None:
    rng = np.random.default_rng(6)
    cases = [
        # (rule, base, recent, noise, expected verdict, why)
        (TTFT_RULE, 600.0, 660.0, 0.05, Verdict.HOLD, "< 15%"),  # +10 % TTFT: under 15 %
        (DECODE_RULE, 12.0, 9.6, 0.05, Verdict.HOLD, "tok/s < 3 tok/s"),  # 2.4 tok/s < floor
        (TTFT_RULE, 300.0, 390.0, 0.05, Verdict.HOLD, "ms < 100 ms"),  # +30 % = 90 ms < 100
        (DECODE_RULE, 70.0, 60.0, 0.60, Verdict.HOLD, "interval reaches"),  # too noisy
    ]
    for rule, base, recent, noise, verdict, why in cases:
        baseline, rec = windows(rng, base=base, recent=recent, noise=noise)
        judgement = judge([test_series(baseline, rec, rule, CONFIG)], CONFIG)[0]
        assert judgement.verdict == verdict and why in judgement.reason, (rule.metric, judgement)


def test_it_applies_benjamini_hochberg_across_the_series_evaluated_together() -> None:
    strong = dict(
        n_baseline=210,
        n_recent=15,
        enough=True,
        baseline_median=70.0,
        recent_median=49.0,
        shift=0.3,
        ci_low=0.25,
        ci_high=0.35,
        abs_shift=21.0,
    )
    alone = SeriesTest(DECODE, p_value=0.004, **strong)
    assert judge([alone], CONFIG)[0].verdict == Verdict.POSITIVE
    # The same p among 20 series evaluated together: q = 0.004 × 20 = 0.08 ≥ 0.05.
    family = [alone] + [SeriesTest(DECODE, p_value=0.5, **strong) for _ in range(19)]
    first = judge(family, CONFIG)[0]
    assert first.verdict == Verdict.HOLD and first.q_value == pytest.approx(0.08)
    assert "q = 0.08" in first.reason


def test_it_describes_each_time_of_day_bucket_and_when_the_change_began() -> None:
    rng = np.random.default_rng(8)
    b_values = 70 * np.exp(rng.normal(0, 0.05, 60))
    baseline = Window.of(b_values, np.resize([0, 1, 3], 60))
    groups = np.repeat([100.0, 200.0, 300.0], 5)  # three runs; the last two are slow
    r_values = np.concatenate([70 * np.ones(5), 49 * np.ones(10)])
    recent = Window.of(r_values, np.repeat([0, 1, 3], 5), groups)
    detail = describe(baseline, recent, DECODE_RULE, CONFIG)
    assert detail.onset == 200.0
    rows = {row.bucket: row for row in detail.buckets}
    assert rows[0].change == pytest.approx(1 - 70 / rows[0].baseline_median, abs=1e-9)
    assert rows[3].change == pytest.approx(1 - 49 / rows[3].baseline_median, abs=1e-9)
    assert (rows[3].n_baseline, rows[3].n_recent) == (20, 5)


def test_it_opens_after_two_positives_and_resolves_after_two_clears() -> None:
    streak = Streak()
    P, C, H, N = Verdict.POSITIVE, Verdict.CLEAR, Verdict.HOLD, Verdict.NO_DATA
    seen = []
    for verdict in (P, H, P, N, P, P, H, C, P, C, C):
        streak, transition = advance(streak, verdict, CONFIG)
        seen.append(transition)
    # P H P: not consecutive; P (no data) P: consecutive -> open; C P C C: resolve at the end.
    assert seen == [
        None,
        None,
        None,
        None,
        Transition.OPEN,
        None,
        None,
        None,
        None,
        None,
        Transition.RESOLVE,
    ]
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
