"""The regression test of one series on plain arrays (no database): the arms and their
verdicts ("back to normal" and the new normal: recovery.py). docs/alerts.md tells the rules;
docs/design.md §7 why.

The unit of evidence is the run (runs.Runs); each run's residual is its value minus what the
baseline expects at that slot, oriented so that positive means worse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np
from scipy import special

from alerts.detection.arms import (
    TREND_MIN_RUNS,
    Arm,
    fading,
    mean_coefficients,
    spike,
    trend_coefficients,
)
from alerts.detection.arms import arm as make_arm
from alerts.detection.arms import settled as settled_shift
from alerts.detection.baseline import Baseline, Shape, correlate, fit_shape, median
from alerts.detection.local_time import BEFORE_S, dst_hold, slot_label
from alerts.detection.noise import Lags, pool
from alerts.detection.recovery import Opened, new_normal, recovery
from alerts.detection.rules import DetectorConfig, MetricRule
from alerts.detection.runs import DAY_S, HOUR_S, Runs
from alerts.detection.state_space import STATE_ARM, step_arm

DAY_ARM, LONG_ARM, TREND_ARM, SLOT_ARM = "24h", "72h", "trend", "slot"
LAST_ARM = "last 2 runs"
SINCE_ARM = "since the change"
# The arms of several runs, whose positive that would start a streak is read at a looser bar
# (DetectorConfig.first_p_factor): small steps show there first. The 24 h, last-two-runs and
# slot arms (two or three runs) and the trend (a wandering provider's line) are read at the
# bars themselves.
FIRST_LOOSER_ARMS = frozenset({LONG_ARM, SINCE_ARM, STATE_ARM})


def _reach(history: Runs, now: float, hours: float, runs: int) -> float:
    """Where a window ending at `now` starts: `hours` back, or further back to hold `runs`
    runs on a sparse schedule (the long window's `long_min_runs`, the trend's TREND_MIN_RUNS;
    series.long_window_start finds the same start in the database)."""
    start = now - hours * HOUR_S
    oldest = int(np.searchsorted(history.t, now, side="right")) - runs
    if oldest >= 0:
        start = min(start, float(history.t[oldest]) - 1.0)  # windows are start < t ≤ now
    return start


@dataclass(frozen=True, slots=True)
class SeriesTest:
    """The result of testing one series. Shifts are worse-oriented fractions (0.3 = 30 % worse);
    n_baseline / n_recent count runs; the shift and interval are the 24 h arm's (the one that
    also decides "back to normal") unless another arm found the regression (see Judgement)."""

    metric: str
    n_baseline: int
    n_recent: int
    enough: bool
    baseline_median: float | None = None
    recent_median: float | None = None
    shift: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    abs_shift: float | None = None  # in the metric's unit, worse-oriented
    p_value: float | None = None  # the smallest over the arms
    arms: tuple[Arm, ...] = ()
    baseline: Baseline | None = None
    frozen: bool = False  # tested against an open alert's frozen baseline
    settled: float | None = None  # the last day's shift as "back to normal" reads it
    # Against an open alert's frozen baseline: whether the recent runs (of its slot, for a
    # one-slot slowdown) are surely back rather than still worse by the alert's effect (a
    # fraction); None when there is no alert
    recovered: bool | None = None
    alert_effect: float | None = None
    latest: float | None = None  # how much worse the newest run is than expected (a fraction)
    # ...and the runs since the streak's last counted positive (SeriesInput.counted_at; the
    # newest run alone when none counts yet)
    seen_since: float | None = None
    seen_runs: int = 1
    # Its baseline is young (DetectorConfig.young_days): its arms of the whole series need a
    # larger effect
    young: bool = False
    # How many times looser than the bars themselves its arms of several runs are read
    # (FIRST_LOOSER_ARMS): a positive that would start a streak on a baseline old enough
    # (DetectorConfig.first_p_factor); 1 once a counted positive waits for the next
    looser: float = 1.0
    latest_bucket: int | None = None  # the newest run's time-of-day bucket
    baseline_days: float | None = None  # too little baseline: the days its runs span
    now: float | None = None  # when it was tested (Unix s)
    # Against an open alert: the series has stayed at one level long enough to be closed as
    # the new normal (new_normal)
    new_normal: bool = False
    # Why a finding is put down to a daylight-saving change (local_time.dst_hold); None if not
    dst_hold: str | None = None
    # The raw correlations of its fitted baseline's own runs (None: frozen or none), which the
    # provider's other series pool with theirs (assess_together's peers)
    noise_lags: Lags | None = None


@dataclass(frozen=True, slots=True)
class BucketRow:
    """Expected (baseline) vs recent median within one time-of-day bucket; change is worse-
    oriented. n_baseline / n_recent count runs (recent: the long window)."""

    bucket: int
    n_baseline: int
    n_recent: int
    baseline_median: float | None
    recent_median: float | None
    change: float | None


@dataclass(frozen=True, slots=True)
class SeriesDetail:
    """What an email shows besides the test: the per-bucket table and when the change started
    (onset: time, Unix seconds, of the first run of the worse stretch; None if none)."""

    buckets: tuple[BucketRow, ...]
    onset: float | None


class Verdict(StrEnum):
    POSITIVE = "positive"  # a regression by every criterion of at least one arm
    CLEAR = "clear"  # the last day within half the minimum effect of the baseline
    HOLD = "hold"  # in between: neither opens nor resolves
    NO_DATA = "no_data"  # too few runs to say anything


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    q_value: float | None
    severity: str  # "major" above config.major_effect, else "minor"
    reason: str
    arm: str | None = None  # the arm that found the regression
    # Positive: what an alert opened now would be sure of (assess_series' `opened`)
    opened: Opened | None = None
    # Clear, and surely back (SeriesTest.recovered). An open alert resolves only on such
    # evaluations.
    recovered: bool = True
    # Positive, and the newest run is itself worse by half the minimum effect (or a slot arm
    # found it): only such positives count toward opening (hysteresis.advance)
    fresh: bool = True
    # An open alert's series stayed at one level long enough: close it as the new normal
    # (SeriesTest.new_normal; hysteresis.advance)
    new_normal: bool = False


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values), as scipy.stats.false_discovery_control."""
    ps = np.asarray(p_values, dtype=float)
    m = len(ps)
    if not m:
        return ps
    order = np.argsort(ps)
    scaled = ps[order] * m / np.arange(1, m + 1)
    q_sorted = np.minimum.accumulate(scaled[::-1])[::-1]
    q = np.empty(m)
    q[order] = np.clip(q_sorted, 0, 1)
    return q


@dataclass(frozen=True, slots=True)
class SeriesInput:
    """One series to test (assess_together): its runs up to `now`, at least back to the
    baseline window's start; its rule; an open alert's frozen baseline and what it opened on;
    its demand time zone and whether to hold what a clock change explains."""

    history: Runs
    rule: MetricRule
    frozen: Baseline | None = None
    opened: Opened | None = None
    zone: str | None = None
    dst_guard: bool = True
    # When the streak's last counted positive was measured (Streak.positive_at, Unix s; None:
    # no positive counts yet): a positive now is fresh only when the runs since it are worse
    # on average (SeriesTest.seen_since), not when the newest of them happens to be
    counted_at: float | None = None


def assess_series(
    history: Runs,
    *,
    now: float,
    rule: MetricRule,
    config: DetectorConfig,
    frozen: Baseline | None = None,
    opened: Opened | None = None,
    zone: str | None = None,
    dst_guard: bool = True,
    counted_at: float | None = None,
) -> SeriesTest:
    """Test whether the series is worse now than its baseline, alone (no other series to pool
    its noise with); never raises on thin data. See assess_together."""
    item = SeriesInput(history, rule, frozen, opened, zone, dst_guard, counted_at)
    return assess_together([item], now=now, config=config)[0]


def assess_together(
    items: Sequence[SeriesInput],
    *,
    now: float,
    config: DetectorConfig,
    peers: Sequence[Lags] = (),
) -> list[SeriesTest]:
    """Test series measured by the same runs (a run's decode and TTFT) at `now` (Unix s);
    never raises on thin data.

    Each baseline is fitted on the `baseline_days` before the long window unless `frozen`
    (an open alert's baseline, or an accepted level) is given; `opened` is what the open alert
    opened on (Judgement.opened: what "back to normal" must be told apart from). The fitted
    baselines' noise correlations are read off their own runs shrunk toward the pool of all
    of them (noise.shrink; `config.pool_noise`): one series' 28 days are thin evidence of
    how a provider drifts, and a reading far too low opens false alerts on the drift. `peers`:
    the raw correlations the provider's other series read last (SeriesTest.noise_lags), pooled
    with theirs where they are counted in the same hours (Lags.alike)."""
    prepared = [_baseline(i.history, now=now, config=config, frozen=i.frozen) for i in items]
    shapes = [shape for shape, *_ in prepared if isinstance(shape, Shape)]
    spacing = shapes[0].model.spacing_h if shapes else None
    lags = [s.lags for s in shapes] + [p for p in peers if p.alike(spacing)]
    pooled = pool(lags) if config.pool_noise and len(lags) > 1 else None
    tests = []
    for item, (shape, window, long_start) in zip(items, prepared, strict=True):
        if isinstance(shape, Shape):
            baseline = correlate(shape, window, pooled)
            test = _assess(item, baseline, window, long_start, now=now, config=config)
            tests.append(replace(test, noise_lags=shape.lags))
        else:
            tests.append(_assess(item, shape, window, long_start, now=now, config=config))
    return tests


def noise_lags(history: Runs, *, now: float, config: DetectorConfig) -> Lags | None:
    """The raw correlations of a series' baseline at `now` (what assess_together pools with
    the provider's other series); None with too little baseline or too few runs."""
    shape, _, _ = _baseline(history, now=now, config=config, frozen=None)
    return shape.lags if isinstance(shape, Shape) else None


def _assess(
    item: SeriesInput,
    baseline: Baseline | None,
    window: Runs,
    long_start: float,
    *,
    now: float,
    config: DetectorConfig,
) -> SeriesTest:
    """One series' test against its baseline (None: too little to fit one), fitted on
    `window`, its long window starting at `long_start`."""
    history, rule, frozen, opened = item.history, item.rule, item.frozen, item.opened
    zone, dst_guard = item.zone, item.dst_guard
    day = history.between(now - config.recent_hours * HOUR_S, now)
    # Enough recent runs: `min_recent` in the long window, one of them in the last day (a
    # schedule of one run a day has one run in any day).
    in_long = len(history.between(now - config.long_hours * HOUR_S, now))
    if baseline is None or not len(day) or in_long < config.min_recent:
        return _too_little(rule.metric, baseline, window, len(day))
    long = history.between(long_start, now)
    resid = rule.worse_sign * (long.log_value - baseline.expected(long))
    # One run far worse than the rest of the window is a spike (a short dip, a bad minute at
    # the provider): the arms that would carry it for three days leave it out. Two such runs
    # are a pattern and count.
    usable = ~spike(resid, baseline.scales(long))
    in_day = long.t > now - config.recent_hours * HOUR_S
    skew = baseline.worse_skew(rule.worse_sign)
    w = _Window(long, resid, usable, in_day, _noise(long, baseline), skew)
    arms = _window_arms(w, baseline, config, zone)
    fitted = window if frozen is None else None  # the state-space arm: not when frozen
    arms += _week_arms(history, w, baseline, fitted, (now, long_start), rule, config)
    looks = _looks(long, config)
    if looks != 1.0:
        arms = [replace(a, p_value=min(1.0, a.p_value * looks)) for a in arms]
    arms = tuple(arms)
    seen = _since_counted(long, resid, baseline, item.counted_at)
    recovered, effect = None, None
    if frozen is not None and len(long) >= 2:
        recovered, effect = recovery(
            long, resid, baseline, usable, in_day, rule=rule, config=config, opened=opened
        )
    first = arms[0]  # the 24 h arm
    settled = settled_shift(resid[w.in_day], baseline.scales(long)[w.in_day], first.shift)
    z = float(special.ndtri(0.5 + config.ci_level / 2))
    expected_now = float(np.exp(median(baseline.expected(day))))
    worse = rule.worse_fraction(first.shift)
    young = _young(item, baseline, config)
    return SeriesTest(
        metric=rule.metric,
        n_baseline=baseline.n,
        n_recent=len(day),
        enough=True,
        baseline_median=expected_now,
        recent_median=float(np.exp(median(day.log_value))),
        shift=worse,
        ci_low=rule.worse_fraction(first.shift - z * first.sd),
        ci_high=rule.worse_fraction(first.shift + z * first.sd),
        abs_shift=expected_now * worse,
        p_value=min(a.p_value for a in arms),
        arms=arms,
        baseline=baseline,
        frozen=frozen is not None,
        settled=rule.worse_fraction(settled),
        recovered=recovered,
        new_normal=frozen is not None
        and new_normal(history, baseline, now=now, rule=rule, config=config, opened=opened),
        alert_effect=None if effect is None else rule.worse_fraction(effect),
        dst_hold=_dst_hold(history, baseline, now=now, rule=rule, config=config, zone=zone)
        if dst_guard and frozen is None
        else None,
        latest=rule.worse_fraction(float(resid[-1])),
        seen_since=rule.worse_fraction(seen[0]),
        seen_runs=seen[1],
        young=young,
        looser=_looser(item, young, config),
        latest_bucket=int(long.bucket[-1]),
        now=now,
    )


def _too_little(metric: str, baseline: Baseline | None, window: Runs, n_recent: int) -> SeriesTest:
    """A series without enough data to test: its baseline's runs (or the window's, and the days
    they span, when there is too little to fit one)."""
    if baseline is not None:
        return SeriesTest(metric, baseline.n, n_recent, enough=False)
    span = float(window.t[-1] - window.t[0]) / DAY_S if len(window) else None
    return SeriesTest(metric, len(window), n_recent, enough=False, baseline_days=span)


def _young(item: SeriesInput, baseline: Baseline, config: DetectorConfig) -> bool:
    """Whether the baseline is young (DetectorConfig.young_days; never an open alert's
    frozen one, nor one stored without its start)."""
    if item.frozen is not None or baseline.start is None:
        return False
    return baseline.end - baseline.start < config.young_days * DAY_S


def _looser(item: SeriesInput, young: bool, config: DetectorConfig) -> float:
    """How many times looser the bars of a positive of this evaluation are: the first
    positive's factor while none counts toward opening, on a baseline that is not young
    (never against an open alert's frozen baseline); 1 otherwise."""
    if item.counted_at is not None or item.frozen is not None or young:
        return 1.0
    return config.first_p_factor


def _since_counted(
    runs: Runs, resid: np.ndarray, baseline: Baseline, at: float | None
) -> tuple[float, int]:
    """How much worse than expected the runs since the streak's last counted positive (`at`)
    are (their inverse-variance weighted mean), and how many they are: the newest run alone
    when no positive counts yet or no other run came since (docs/alerts.md, "fresh")."""
    since = runs.t > (at if at is not None else np.inf)
    if int(since.sum()) < 2:
        return float(resid[-1]), 1
    weights = mean_coefficients(runs.where(since), baseline)
    return float(weights @ resid[since]), int(since.sum())


def _dst_hold(
    history: Runs,
    baseline: Baseline,
    *,
    now: float,
    rule: MetricRule,
    config: DetectorConfig,
    zone: str | None,
) -> str | None:
    """local_time.dst_hold over the baseline window and the long window."""
    span = config.baseline_days * DAY_S + config.long_hours * HOUR_S
    runs = history.between(now - span - BEFORE_S, now)
    resid = rule.worse_sign * (runs.log_value - baseline.expected(runs))
    half = rule.log_shift(rule.min_effect) / 2
    scale = baseline.scales(runs)
    return dst_hold(runs.t, runs.bucket, resid, scale, now=now, zone=zone, half=half, span=span)


def _baseline(
    history: Runs, *, now: float, config: DetectorConfig, frozen: Baseline | None
) -> tuple[Shape | Baseline | None, Runs, float]:
    """What to test against: the shape of a baseline fitted on the `baseline_days` before the
    long window (its correlation still to be read: assess_together), or the frozen baseline;
    the runs it was fitted on, and where the long window starts."""
    long_start = _reach(history, now, config.long_hours, config.long_min_runs)
    window = history.between(long_start - config.baseline_days * DAY_S, long_start)
    if frozen is not None:
        return frozen, window, max(long_start, frozen.end)  # never test the baseline's runs
    if not config.enough_baseline(window.t):
        return None, window, long_start
    shape = fit_shape(
        window, min_bucket_runs=config.min_bucket_baseline, min_week_runs=config.min_week_runs
    )
    return shape, window, long_start


@dataclass(frozen=True, slots=True)
class _Window:
    """The long window's runs, their worse-oriented residuals, which of them are not a spike
    (arms.spike) and which are in the last day."""

    runs: Runs
    resid: np.ndarray
    usable: np.ndarray
    in_day: np.ndarray
    noise: np.ndarray | None = None  # Baseline.noise_covariance of the runs (None: not known)
    skew: float = 0.0  # a run's residual's skewness toward worse (Baseline.worse_skew)

    def noise_of(self, mask: np.ndarray) -> np.ndarray | None:
        """The own-noise covariance of the runs in `mask` (None: not known)."""
        if self.noise is None:
            return None
        index = np.flatnonzero(mask)
        return self.noise[index[:, None], index]


def _mean_arm(w: _Window, baseline: Baseline, name: str, mask) -> Arm:
    """The weighted mean of the window's runs in `mask` (its spike left out, unless that
    leaves nothing)."""
    if (mask & w.usable).any():
        mask = mask & w.usable
    runs = w.runs.where(mask)
    coefficients = mean_coefficients(runs, baseline)
    resid, noise = w.resid[mask], w.noise_of(mask)
    return make_arm(name, coefficients, resid, runs, baseline, noise, skew=w.skew)


def _latest(n: int, k: int) -> np.ndarray:
    """Mask of the last k of n runs."""
    mask = np.zeros(n, bool)
    mask[max(n - k, 0) :] = True
    return mask


def _since_scheduled(runs: Runs) -> list[np.ndarray]:
    """Masks of the runs from the k-th newest scheduled run on, k = 4..6 (the last k runs
    where fewer than k are scheduled). The confirmation runs between the scheduled ones are
    in them: the last k runs alone would be the last half day of a series a suspicion
    confirms every two or three hours, a shorter reach than the day's own arm."""
    scheduled = np.flatnonzero(~runs.extra)
    n = len(runs)
    masks = []
    for k in range(4, 7):
        if k <= len(scheduled):
            masks.append(np.arange(n) >= scheduled[-k])
        elif k <= n:
            masks.append(_latest(n, k))
    return masks


def _window_arms(
    w: _Window, baseline: Baseline, config: DetectorConfig, zone: str | None
) -> list[Arm]:
    """The arms on the long window: the last day (first), the last two runs, since the
    change, the whole window and one per time-of-day slot (named in the series' demand time
    `zone`, whose clock its slots follow; None: UTC)."""
    long, n = w.runs, len(w.runs)
    arms = [_mean_arm(w, baseline, DAY_ARM, w.in_day)]
    if w.in_day.sum() != 2 and n >= 2:
        # The last two runs: a step seen twice in a row, a run sooner than the day's mean (or,
        # on a daily schedule, a day later than the day's one run); the day's own two runs
        # when it has two.
        arms.append(_mean_arm(w, baseline, LAST_ARM, _latest(n, 2)))
    # Since the change: the runs since the k-th newest scheduled one (k = 4..6, a day and a
    # half to two days at three runs a day), the k whose mean is most surely worse, its
    # p-value multiplied by the number of k tried. A step seen in four or five runs is surer
    # than the day's three alone.
    tails = [_mean_arm(w, baseline, SINCE_ARM, mask) for mask in _since_scheduled(long)]
    if tails:
        best = min(tails, key=lambda a: a.p_value)
        arms.append(replace(best, p_value=min(1.0, best.p_value * len(tails))))
    if n <= w.in_day.sum():
        return arms
    arms.append(_mean_arm(w, baseline, LONG_ARM, np.ones(n, bool)))
    # Runs of one slot are a day apart (their correlation read off the hours). Each slot arm's
    # p-value is multiplied by the number of slots tested (Bonferroni within the series):
    # three or four chances a day to find one slot worse by chance are one test's worth.
    slots = []
    for bucket in sorted(set(long.bucket.tolist())):
        mine = long.bucket == bucket
        if config.min_slot_runs <= mine.sum() < n:
            name = f"{SLOT_ARM} {slot_label(bucket, zone)}"
            own = mine & w.usable
            fades = fading(w.resid[own], baseline.scales(long.where(own)))
            slots.append((_mean_arm(w, baseline, name, mine), bucket, fades))
    arms.extend(
        replace(a, p_value=min(1.0, a.p_value * len(slots)), bucket=bucket, fading=fades)
        for a, bucket, fades in slots
    )
    return arms


def _trend_arm(week: tuple, baseline: Baseline, *, now: float) -> Arm | None:
    """A straight line through the week's residuals, read now; None when the runs are too few
    to fit one. week: its runs, their residuals, own-noise covariance and skew (_week_arms)."""
    runs, resid, noise, skew = week
    c = trend_coefficients(runs, baseline, now)
    if c is None:
        return None
    return make_arm(TREND_ARM, c, resid, runs, baseline, noise, skew=skew)


def _week_arms(
    history: Runs, w: _Window, baseline: Baseline, fitted: Runs | None, times: tuple, rule, config
) -> list[Arm]:
    """The arms on the week's runs: the trend read at `now` and, given the runs the baseline
    was fitted on (`fitted`; None against a frozen baseline, whose week starts no earlier
    than the long window), the state-space arm unless its bar is 0; each where there are
    runs enough for it. times: (now, where the long window starts)."""
    now, long_start = times
    start = _reach(history, now, config.trend_hours, TREND_MIN_RUNS)
    if fitted is None:
        start = max(start, long_start)
    runs = history.between(start, now)
    spiked = w.runs.t[~w.usable]  # the window's spike is left out of the week too
    if len(spiked):
        runs = runs.where(~np.isin(runs.t, spiked))
    resid = rule.worse_sign * (runs.log_value - baseline.expected(runs))
    week = (runs, resid, _noise(runs, baseline), w.skew)
    arms = [_trend_arm(week, baseline, now=now)]
    if fitted is not None and config.step_p_value > 0:
        arms.append(_step_arm(week, baseline, long_start))
    return [arm for arm in arms if arm is not None]


def _step_arm(week: tuple, baseline: Baseline, long_start: float) -> Arm | None:
    """The state-space arm (state_space.step_arm) on the week's runs (as _trend_arm's), its
    onsets in the long window; its drift model the one fitted with the baseline on its runs
    (Baseline.level_walk; None: too few, no arm)."""
    model = baseline.level_walk
    if model is None:
        return None
    runs, resid, noise, skew = week
    first = int(np.searchsorted(runs.t, long_start, side="right"))
    return step_arm(runs, resid, baseline, first, model, noise, skew=skew)


def _noise(runs: Runs, baseline: Baseline) -> np.ndarray | None:
    """The runs' own-noise covariance, for every arm on them (a submatrix each: `_Window`);
    without the baseline's spacing each subset would read its own (Baseline.correlations)."""
    return baseline.noise_covariance(runs) if baseline.spacing_h else None


def _looks(long: Runs, config: DetectorConfig) -> float:
    """Every evaluation is another chance of a false positive: the p-value is set for
    `config.runs_per_day` evaluations a day, and a series run (and evaluated) more often has
    its arms' p-values multiplied by how many times more (Bonferroni over time), so an hourly
    schedule keeps the same false alerts a month. Its runs pay for it: a day of 24 runs
    measures a shift far more surely than a day of three. (Runs a day: from the median
    spacing of the long window's scheduled runs, which a missed or late run barely moves.)
    Extra runs are not counted: confirmation runs come only while a series is suspect, two
    hours apart or more, and counted they multiplied every p by up to four just when their
    evidence was wanted."""
    scheduled = long.where(~long.extra)
    if len(scheduled) > 2:
        long = scheduled
    spacing = median(np.diff(long.t)) if len(long) > 2 else 0.0
    return max(1.0, 24 * HOUR_S / spacing / config.runs_per_day) if spacing > 0 else 1.0


def onset(history: Runs, baseline: Baseline, *, since: float, rule: MetricRule) -> float | None:
    """When the worse stretch began: of the runs after `since`, the start of the stretch to
    the end that is most surely shifted (its residuals' sum / √length: the likelihood of a
    step there against the baseline), among those that average at least the minimum effect.
    """
    runs = history.between(since, np.inf)
    if not len(runs):
        return None
    resid = rule.worse_sign * (runs.log_value - baseline.expected(runs))
    lengths = np.arange(len(resid), 0, -1)
    tail_sums = np.cumsum(resid[::-1])[::-1]
    score = np.where(tail_sums / lengths >= rule.log_shift(rule.min_effect), tail_sums, -np.inf)
    if not np.isfinite(score).any():
        return float(runs.t[0])
    return float(runs.t[int(np.argmax(score / np.sqrt(lengths)))])


def describe(
    history: Runs, baseline: Baseline, *, now: float, rule: MetricRule, config: DetectorConfig
) -> SeriesDetail:
    """The per-bucket table (baseline model vs the long window) and the onset, computed only
    when an alert is written."""
    start = max(now - config.long_hours * HOUR_S, baseline.end)
    long = history.between(start, now)
    rows = []
    week = float(baseline.weekly(long).mean()) if len(long) else 0.0
    for bucket in sorted(set(baseline.counts) | set(long.bucket.tolist())):
        expected = math.exp(baseline.level + baseline.time_of_day.get(bucket, 0.0) + week)
        mine = long.log_value[long.bucket == bucket]
        recent = float(np.exp(median(mine))) if len(mine) else None
        change = rule.change(expected, recent) if recent else None
        rows.append(
            BucketRow(bucket, baseline.counts.get(bucket, 0), len(mine), expected, recent, change)
        )
    return SeriesDetail(tuple(rows), onset(history, baseline, since=start, rule=rule))


def severity_of(shift: float, config: DetectorConfig) -> str:
    return "major" if shift > config.major_effect else "minor"


def _arm_failures(arm: Arm, q: float, test: SeriesTest, rule: MetricRule, config) -> list[str]:
    fraction = rule.worse_fraction(arm.shift)
    share = config.effect_gate if arm.bucket is None else config.slot_effect_gate
    # A young baseline's pooled arms need more (DetectorConfig.young_days): a wandering
    # provider moves every slot together, and a slot arm already needs more than they do.
    young = test.young and arm.bucket is None
    gate = share * rule.min_effect * (config.young_effect_factor if young else 1.0)
    failed = []
    looser = test.looser if arm.name in FIRST_LOOSER_ARMS else 1.0
    bar = looser * (config.step_p_value if arm.name == STATE_ARM else config.p_value)
    if arm.p_value >= bar:
        failed.append(f"p = {arm.p_value:.2g} ≥ {bar:g}")
    q_bar = looser * config.fdr_q
    if q >= q_bar:
        failed.append(f"q = {q:.2g} ≥ {q_bar:g}")
    if fraction < gate:
        failed.append(f"shift {fraction:.1%} < {gate:.0%}" + (" (young baseline)" if young else ""))
    # One run must not carry an arm: without its worst run, the estimate still reaches half
    # the minimum effect (the trend arm too: a line read at its end leans on its last run).
    if rule.worse_fraction(arm.without_worst) < rule.min_effect / 2:
        failed.append(f"one run carries it ({rule.worse_fraction(arm.without_worst):.1%} without)")
    absolute = (test.baseline_median or 0.0) * fraction
    if absolute < rule.floor:
        failed.append(f"shift {absolute:.3g} {rule.unit} < {rule.floor:g} {rule.unit}")
    return failed


def judge(tests: Sequence[SeriesTest], config: DetectorConfig) -> list[Judgement]:
    """Verdicts for series evaluated together: Benjamini–Hochberg across all their arms."""
    flat = [(i, arm) for i, t in enumerate(tests) if t.enough for arm in t.arms]
    q_all = benjamini_hochberg([arm.p_value for _, arm in flat])
    q_by_test: dict[int, list[float]] = {}
    for (i, _), q in zip(flat, q_all, strict=True):
        q_by_test.setdefault(i, []).append(float(q))
    out = []
    for i, test in enumerate(tests):
        if not test.enough:
            reason = f"{test.n_recent} recent / {test.n_baseline} baseline runs: too few"
            if test.n_baseline >= config.min_baseline and test.baseline_days is not None:
                reason = (
                    f"{test.n_baseline} baseline runs over {test.baseline_days:.1f} days: "
                    f"too short (they need {config.min_baseline_days:g} days)"
                )
            out.append(Judgement(Verdict.NO_DATA, None, "minor", reason))
            continue
        judgement = _judge_one(test, q_by_test[i], config)
        if test.new_normal:
            reason = f"{judgement.reason}; stayed at one level: closed as the new normal"
            judgement = replace(judgement, new_normal=True, reason=reason)
        elif judgement.verdict == Verdict.POSITIVE and test.dst_hold:
            reason = f"{judgement.reason}; held: {test.dst_hold}"
            judgement = Judgement(Verdict.HOLD, judgement.q_value, judgement.severity, reason)
        out.append(judgement)
    return out


def _judge_one(test: SeriesTest, qs: list[float], config: DetectorConfig) -> Judgement:
    """The verdict of one series with enough data, its arms' q-values given."""
    rule = config.rules[test.metric]
    verdicts = [
        (arm, q, _arm_failures(arm, q, test, rule, config))
        for arm, q in zip(test.arms, qs, strict=True)
    ]
    positive = [(arm, q) for arm, q, failed in verdicts if not failed]
    half = rule.min_effect / 2
    q_min = min(qs)
    # Back within half the effect over the last day is "clear" even while an arm still
    # carries a bad run that is over (a short dip); a slowdown confined to one slot hides
    # in the day's median, so a positive slot arm whose last two runs are both still worse
    # by the minimum effect, as is its mean without its worst run, is never overruled (one
    # bad run is a dip that is over, two are a pattern).
    slot_bad = any(
        arm.bucket is not None
        and rule.worse_fraction(min(arm.latest, arm.without_worst)) >= rule.min_effect
        for arm, _ in positive
    )
    if test.settled < half and not slot_bad:
        reason = f"last {DAY_ARM}: shift {test.settled:.1%} < {half:.1%}"
        recovered = test.recovered is not False
        if not recovered:
            reason += f", but not yet surely back from {test.alert_effect:.1%} worse"
        severity = severity_of(test.shift, config)
        return Judgement(Verdict.CLEAR, q_min, severity, reason, recovered=recovered)
    if positive:
        arm, q = min(positive, key=lambda pair: pair[1])
        shift = max(test.shift, rule.worse_fraction(arm.shift))
        severity = severity_of(shift, config)
        reason = f"regression ({arm.name})"
        opened = Opened(arm.shift - arm.sd, arm.bucket, test.now)
        # Seen twice means in two runs: a positive counts toward opening only when the
        # newest run is itself worse by half the minimum effect, not when the arm re-reads
        # two unlucky runs that the newest one does not back. A slot arm's newest run is
        # usually another slot's, which re-reads the slot's runs: that counts unless the
        # slot's newest run is far better than the one before (a short dip and an unlucky
        # run of its slot a day later, not a level); then the slot's next run must back it.
        if arm.bucket is None:
            fresh = test.seen_since >= half
            if not fresh:
                runs = (
                    "newest run"
                    if test.seen_runs == 1
                    else f"{test.seen_runs} runs since the last positive"
                )
                reason += f", not seen again in the {runs} ({test.seen_since:.1%})"
        elif arm.bucket == test.latest_bucket:
            fresh = test.latest >= half
            if not fresh:
                reason += f", not seen again in the newest run ({test.latest:.1%})"
        else:
            fresh = not arm.fading
            if not fresh:
                reason += (
                    ", the slot's newest run far better than the one before: "
                    "waiting for its next run"
                )
        return Judgement(Verdict.POSITIVE, q, severity, reason, arm.name, opened, fresh=fresh)
    arm, _, failed = verdicts[0]
    reason = f"{arm.name}: " + "; ".join(failed)
    return Judgement(Verdict.HOLD, q_min, severity_of(test.shift, config), reason)
