"""The regression test of one series (docs/design.md §7), on plain arrays: no database here.

Values are compared on log scale, as residuals against the baseline's median per time-of-day
bucket, so a provider that is always slower at 18:00 UTC is not "slower" at 18:00. Residuals are
oriented so that positive means worse (lower decode speed, higher TTFT). The recent window is
tested against the baseline with a one-sided Mann–Whitney U; the size of the change is the
Hodges–Lehmann shift (median of all recent − baseline differences) with its distribution-free
confidence interval from order statistics of those differences (Moses' method).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from scipy import special

from .rules import DetectorConfig, MetricRule

# Beyond this many pairwise differences, the larger sample is thinned to evenly spaced order
# statistics (same distribution, bounded memory: 2e6 differences is 16 MB).
MAX_PAIRS = 2_000_000


@dataclass(frozen=True, slots=True)
class Window:
    """Successful samples of one window: raw values (tok/s or ms) and their time-of-day bucket.

    `groups` optionally labels each value with the run it came from (any sortable number, e.g.
    the run's slot as a timestamp), used to say when a change started.
    """

    values: np.ndarray
    buckets: np.ndarray
    groups: np.ndarray | None = None

    @classmethod
    def of(cls, values, buckets, groups=None) -> Window:
        values = np.asarray(values, dtype=float)
        buckets = np.asarray(buckets, dtype=int)
        if values.shape != buckets.shape or values.ndim != 1:
            raise ValueError("values and buckets must be 1-D arrays of the same length")
        keep = np.isfinite(values) & (values > 0)  # log scale: a zero speed is not a sample
        grp = None if groups is None else np.asarray(groups, dtype=float)[keep]
        return cls(values[keep], buckets[keep], grp)

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True, slots=True)
class BucketRow:
    """Baseline vs recent median within one time-of-day bucket; change is worse-oriented."""

    bucket: int
    n_baseline: int
    n_recent: int
    baseline_median: float | None
    recent_median: float | None
    change: float | None


@dataclass(frozen=True, slots=True)
class SeriesTest:
    """The result of testing one series. Shifts are worse-oriented fractions (0.3 = 30 % worse)."""

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
    p_value: float | None = None


@dataclass(frozen=True, slots=True)
class SeriesDetail:
    """What an email shows besides the test: the per-bucket table and when the change started.

    onset: group label (see Window) of the first recent run whose median is worse than half the
    minimum effect; None without groups.
    """

    buckets: tuple[BucketRow, ...]
    onset: float | None


class Verdict(StrEnum):
    POSITIVE = "positive"  # a regression by every criterion
    CLEAR = "clear"  # shift under half the minimum effect
    HOLD = "hold"  # in between: neither opens nor resolves
    NO_DATA = "no_data"  # too few samples to say anything


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    q_value: float | None
    severity: str  # "major" above config.major_effect, else "minor"
    reason: str


def bucket_profile(baseline: Window, *, min_per_bucket: int) -> tuple[dict[int, float], float]:
    """Median log value per bucket (buckets with enough baseline samples) and the overall one."""
    logs = np.log(baseline.values)
    overall = float(np.median(logs))
    profile = {}
    for bucket in np.unique(baseline.buckets):
        in_bucket = logs[baseline.buckets == bucket]
        if len(in_bucket) >= min_per_bucket:
            profile[int(bucket)] = float(np.median(in_bucket))
    return profile, overall


def residuals(window: Window, profile: dict[int, float], overall: float, *, sign: float):
    """Worse-oriented log residuals: sign × (log value − baseline median of its bucket)."""
    expected = np.full(len(window), overall)
    for bucket, median in profile.items():
        expected[window.buckets == bucket] = median
    return sign * (np.log(window.values) - expected)


def mann_whitney_greater(x: np.ndarray, y: np.ndarray) -> float:
    """One-sided p-value of Mann–Whitney U that x tends to exceed y (normal approximation).

    Identical to scipy.stats.mannwhitneyu(x, y, alternative="greater", method="asymptotic")
    (tie-corrected variance, continuity correction; tests check it), computed from a sorted y
    in O(m log n): scipy's wrapper spends ~1 ms per call validating input, which the live
    evaluation can afford but bench/detector.py, running the same code 70,000 times, cannot.
    """
    m, n = len(x), len(y)
    ys = np.sort(y)
    below = np.searchsorted(ys, x, side="left")
    at_most = np.searchsorted(ys, x, side="right")
    u = float(below.sum() + 0.5 * (at_most - below).sum())
    combined = np.sort(np.concatenate([x, y]))
    total = m + n
    tie_term = 0.0
    if np.any(combined[1:] == combined[:-1]):
        _, counts = np.unique(combined, return_counts=True)
        tie_term = float((counts**3 - counts).sum()) / (total * (total - 1))
    sd = math.sqrt(m * n / 12 * ((total + 1) - tie_term))
    if sd == 0:
        return 1.0
    z = (u - m * n / 2 - 0.5) / sd
    return float(special.ndtr(-z))


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values), as scipy.stats.false_discovery_control."""
    ps = np.asarray(p_values, dtype=float)
    m = len(ps)
    order = np.argsort(ps)
    scaled = ps[order] * m / np.arange(1, m + 1)
    q_sorted = np.minimum.accumulate(scaled[::-1])[::-1]
    q = np.empty(m)
    q[order] = np.clip(q_sorted, 0, 1)
    return q


def _thin(x: np.ndarray, size: int) -> np.ndarray:
    if len(x) <= size:
        return x
    return np.sort(x)[np.linspace(0, len(x) - 1, size).round().astype(int)]


def hodges_lehmann(recent: np.ndarray, baseline: np.ndarray, *, level: float):
    """(shift, low, high): median of pairwise differences and its two-sided `level` interval.

    The interval's ends are order statistics of the m·n differences at ranks given by the
    normal approximation of the Mann–Whitney U distribution (Moses 1965): distribution-free,
    no bootstrap needed.
    """
    m, n = len(recent), len(baseline)
    if m * n > MAX_PAIRS:
        baseline = _thin(baseline, max(MAX_PAIRS // m, 1))
        n = len(baseline)
        if m * n > MAX_PAIRS:
            recent = _thin(recent, max(MAX_PAIRS // n, 1))
            m = len(recent)
    diffs = np.subtract.outer(recent, baseline).ravel()
    total = m * n
    z = float(special.ndtri(0.5 + level / 2))
    rank = math.floor(total / 2 - z * math.sqrt(m * n * (m + n + 1) / 12))
    low_idx = min(max(rank, 1), total) - 1
    high_idx = total - 1 - low_idx
    mid = total // 2
    picks = sorted({low_idx, high_idx, mid, max(mid - 1, 0)})
    part = np.partition(diffs, picks)
    shift = float(part[mid]) if total % 2 else float((part[mid - 1] + part[mid]) / 2)
    return shift, float(part[low_idx]), float(part[high_idx])


def _onset(groups: np.ndarray | None, oriented: np.ndarray, threshold: float) -> float | None:
    """The first run (group) whose median residual is worse than threshold (log units)."""
    if groups is None or len(groups) == 0:
        return None
    for group in np.unique(groups):  # sorted ascending
        if np.median(oriented[groups == group]) >= threshold:
            return float(group)
    return float(groups.min())


def _bucket_rows(baseline: Window, recent: Window, rule: MetricRule) -> tuple[BucketRow, ...]:
    rows = []
    for bucket in sorted(set(baseline.buckets.tolist()) | set(recent.buckets.tolist())):
        base = baseline.values[baseline.buckets == bucket]
        rec = recent.values[recent.buckets == bucket]
        base_med = float(np.median(base)) if len(base) else None
        rec_med = float(np.median(rec)) if len(rec) else None
        change = rule.change(base_med, rec_med) if base_med and rec_med else None
        rows.append(BucketRow(int(bucket), len(base), len(rec), base_med, rec_med, change))
    return tuple(rows)


def _sign(rule: MetricRule) -> float:
    return 1.0 if rule.higher_is_worse else -1.0


def test_series(
    baseline: Window, recent: Window, rule: MetricRule, config: DetectorConfig
) -> SeriesTest:
    """Test whether the recent window is worse than the baseline; never raises on thin data."""
    n_b, n_r = len(baseline), len(recent)
    if n_b < config.min_baseline or n_r < config.min_recent:
        return SeriesTest(rule.metric, n_b, n_r, enough=False)
    sign = _sign(rule)
    profile, overall = bucket_profile(baseline, min_per_bucket=config.min_bucket_baseline)
    base_res = residuals(baseline, profile, overall, sign=sign)
    rec_res = residuals(recent, profile, overall, sign=sign)
    p_value = mann_whitney_greater(rec_res, base_res)
    shift, low, high = hodges_lehmann(rec_res, base_res, level=config.ci_level)
    baseline_median = float(np.median(baseline.values))
    worse = rule.worse_fraction(shift)
    return SeriesTest(
        metric=rule.metric,
        n_baseline=n_b,
        n_recent=n_r,
        enough=True,
        baseline_median=baseline_median,
        recent_median=float(np.median(recent.values)),
        shift=worse,
        ci_low=rule.worse_fraction(low),
        ci_high=rule.worse_fraction(high),
        abs_shift=baseline_median * worse,
        p_value=p_value,
    )


test_series.__test__ = False  # a library function, not a pytest test


def describe(
    baseline: Window, recent: Window, rule: MetricRule, config: DetectorConfig
) -> SeriesDetail:
    """The per-bucket table and the onset, computed only when an alert is written."""
    onset = None
    if len(baseline) and len(recent):
        profile, overall = bucket_profile(baseline, min_per_bucket=config.min_bucket_baseline)
        oriented = residuals(recent, profile, overall, sign=_sign(rule))
        onset = _onset(recent.groups, oriented, rule.log_shift(rule.min_effect / 2))
    return SeriesDetail(_bucket_rows(baseline, recent, rule), onset)


def severity_of(shift: float, config: DetectorConfig) -> str:
    return "major" if shift > config.major_effect else "minor"


def judge(tests: Sequence[SeriesTest], config: DetectorConfig) -> list[Judgement]:
    """Verdicts for series evaluated together: Benjamini–Hochberg across those with enough data."""
    testable = [i for i, t in enumerate(tests) if t.enough]
    q_values: dict[int, float] = {}
    if testable:
        ps = np.array([tests[i].p_value for i in testable], dtype=float)
        q_values = dict(zip(testable, benjamini_hochberg(ps), strict=True))
    out = []
    for i, test in enumerate(tests):
        if not test.enough:
            reason = f"{test.n_recent} recent / {test.n_baseline} baseline samples: too few"
            out.append(Judgement(Verdict.NO_DATA, None, "minor", reason))
            continue
        rule = config.rules[test.metric]
        q = float(q_values[i])
        severity = severity_of(test.shift, config)
        half = rule.min_effect / 2
        failed = []
        if test.p_value >= config.p_value:
            failed.append(f"p = {test.p_value:.2g} ≥ {config.p_value:g}")
        if q >= config.fdr_q:
            failed.append(f"q = {q:.2g} ≥ {config.fdr_q:g}")
        if test.shift < rule.min_effect:
            failed.append(f"shift {test.shift:.1%} < {rule.min_effect:.0%}")
        if test.abs_shift < rule.floor:
            failed.append(f"shift {test.abs_shift:.3g} {rule.unit} < {rule.floor:g} {rule.unit}")
        if test.ci_low < half:
            failed.append(f"interval reaches {test.ci_low:.1%} < {half:.1%}")
        if not failed:
            out.append(Judgement(Verdict.POSITIVE, q, severity, "regression"))
        elif test.shift < half:
            out.append(
                Judgement(Verdict.CLEAR, q, severity, f"shift {test.shift:.1%} < {half:.1%}")
            )
        else:
            out.append(Judgement(Verdict.HOLD, q, severity, "; ".join(failed)))
    return out
