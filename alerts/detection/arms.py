"""The arms of the detector: estimates of a series' shift from its run residuals, each with
a standard error from the baseline's own noise (see detector.py for how they are used)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from alerts.detection.baseline import DRIFT_BLOCK_H, SHRINK_RUNS, Baseline, median
from alerts.detection.noise import MIN_DECAY, mean_inflation
from alerts.detection.runs import DAY_S, Runs


@dataclass(frozen=True, slots=True)
class Arm:
    """One arm's estimate: shift (worse-oriented log units) ± sd over n runs, and its p-value."""

    name: str
    n: int
    shift: float
    sd: float
    p_value: float
    latest: float = 0.0  # the better of its last two runs' residuals (log, worse-oriented)
    # The estimate without the run that contributes most to it: a shift that one run carries
    # (a short dip, one bad minute at the provider) is not a regression, however sure its p;
    # an arm of one run has nothing left without it (0).
    without_worst: float = 0.0
    bucket: int | None = None  # a slot arm's time-of-day bucket
    fading: bool = False  # a slot arm: its newest run far better than the one before


def p_value(shift: float, sd: float, df: int, skew: float = 0.0) -> float:
    """One-sided p of a worse shift: Student t with the baseline's degrees of freedom, its z
    first read through the Cornish–Fisher expansion of an estimate whose skewness toward
    worse is `skew` (arm_skew): z = q + g (q² − 1), g = skew / 6, solved for the standard
    normal q (above z = 1, where the correction starts; none when skew ≤ 0)."""
    if sd <= 0:
        return 1.0
    z = shift / sd
    g = skew / 6.0
    if g > 0 and z > 1.0:
        z = (math.sqrt(1 + 4 * g * (z + g)) - 1) / (2 * g)
    return float(special.stdtr(max(df, 2), -z))


def arm_skew(c, run_skew: float) -> float:
    """The skewness of the estimate c·resid of runs whose residuals (independent, alike) have
    skewness `run_skew`: Σc³ / (Σc²)^(3/2) of it (a mean of m runs: 1 / √m of it)."""
    if run_skew <= 0:
        return 0.0
    c = np.asarray(c, dtype=float)
    squares = float(c @ c)
    return run_skew * float((c * c) @ c) / squares**1.5 if squares > 0 else 0.0


def arm(
    name: str, c, resid, runs: Runs, baseline: Baseline, noise=None, *, skew: float = 0.0
) -> Arm:
    """The arm whose estimate is the linear combination c·resid of the runs, with the standard
    error `variances` gives it (from the hours between the runs; `noise`: their own noise's
    covariance, when known). Degrees of freedom: the fewest baseline runs behind any bucket's
    scale involved (its own runs plus the pooled runs it is shrunk toward: SHRINK_RUNS runs'
    worth). skew: a run's residual's skewness toward worse (Baseline.worse_skew)."""
    sd = math.sqrt(float(variances(c, runs, baseline, noise)[0]))
    df = degrees_of_freedom(runs, baseline)
    contributions = c * resid
    shift = float(contributions.sum())
    worst = int(np.argmax(contributions))
    without_worst = 0.0  # one run alone: nothing is left without it
    if len(resid) > 1 and c[worst] < 1:
        without_worst = (shift - float(contributions[worst])) / (1 - float(c[worst]))
    return Arm(
        name,
        len(resid),
        shift,
        sd,
        p_value(shift, sd, int(df) - 1, arm_skew(c, skew)),
        min(resid[-2:].tolist()),
        without_worst,
    )


def _level(baseline: Baseline, bucket: int) -> tuple[int, float]:
    """The runs behind a bucket's expected value and the bucket's noise scale. A bucket with
    a level of its own: its runs. One without: the overall level's, which is the mean of the
    runs of the buckets too sparse for a level of their own when there are any (baseline.py,
    _levels: a slot that a daylight-saving change or an edited schedule began days ago, read
    against its first two or three runs), else every run's."""
    if bucket in baseline.time_of_day:
        n_b = baseline.counts.get(bucket, 0)
    else:
        n_b = baseline.memo("sparse_runs", _sparse_runs) or baseline.n
    return n_b, baseline.scale.get(bucket, baseline.overall_scale)


def _sparse_runs(baseline: Baseline) -> int:
    """The baseline's runs of buckets without a level of their own."""
    return sum(n for b, n in baseline.counts.items() if b not in baseline.time_of_day)


def variances(c, runs: Runs, baseline: Baseline, noise=None) -> np.ndarray:
    """The variance of each row of coefficients c (one row, or m rows × the runs) applied to
    the runs' residuals.

    Four parts: the runs' own noise, correlated by the hours between them
    (Baseline.correlations: c Σ cᵀ); the error of each bucket's (and day of the week's)
    expected value, shared by its runs (a mean of n runs has variance σ²/n); where the series
    drifts, the error of the whole baseline's level, which correlated runs pin down far less
    well than independent ones; and the drift slower than that, measured on the baseline's
    72 h blocks (Baseline.drift_var), which moves the window and, less, the baseline.
    Without the second, a slot arm of three runs against a bucket level fitted on fourteen is
    far too sure of itself; without the others, a drifting provider alerts on its drift.
    `noise`: the first part's covariance (Baseline.noise_covariance of the runs), when known.
    """
    c = np.atleast_2d(c)
    if noise is None:
        noise = baseline.noise_covariance(runs)
    one = len(c) == 1  # one arm: its sums as floats (numpy's cost per call, not its sums)

    def total(mask=None):
        sums = c.sum(axis=1) if mask is None else c[:, mask].sum(axis=1)
        return float(sums[0]) if one else sums

    variance = np.einsum("ki,ij,kj->k", c, noise, c)
    variance = float(variance[0]) if one else variance
    # One row: every bucket's sum at once (bincount: the same sums, up to rounding)
    by_bucket = np.bincount(runs.bucket, weights=c[0]).tolist() if one else None
    for bucket in sorted(set(runs.bucket.tolist())):
        n_b, sigma_b = _level(baseline, bucket)
        s = by_bucket[bucket] if one else total(runs.bucket == bucket)
        variance += s * s * sigma_b**2 / max(n_b, 1)
    if baseline.day_var:
        days = set(runs.day.tolist())  # a day without runs adds nothing
        by_day = np.bincount(runs.day, weights=c[0], minlength=7).tolist() if one else None
        for day, error in baseline.day_var.items():
            if day in days:
                s = by_day[day] if one else total(runs.day == day)
                variance += s * s * error
    s = total()
    variance += s * s * shared_offset(baseline)
    return np.array([variance]) if one else variance


def shared_offset(baseline: Baseline, *, walk: bool = True) -> float:
    """The variance every run shares (the last two parts of `variances`): the error of the
    baseline's level that a drifting series' correlated runs leave, and the drift slower than
    the lags see (Baseline.drift_var); or, where larger, where the level can have walked since
    the baseline (Baseline.walk_var). A steady series' walk is 0: nothing changes there. Once
    per baseline (Baseline.memo). walk=False: without the walk (as with walk_var 0)."""
    slow = baseline.memo("slow_offset", _slow_offset)
    # Where the level can have walked since the baseline, as its variogram shows it wander
    # (Baseline.walk_var): a young baseline's correlation and blocks miss a drift that its
    # runs' differences show. The larger of the two, as both are the level's one error.
    return max(slow, baseline.walk_var if walk else 0.0)


def _slow_offset(baseline: Baseline) -> float:
    """shared_offset's level error and slow drift."""
    psi = max(baseline.phi, MIN_DECAY) if baseline.rho > 0 else 0.0
    drift = mean_inflation(baseline.n, baseline.rho, psi) - 1
    level = baseline.overall_scale**2 / baseline.n * drift
    span_h = (baseline.end - (baseline.start or baseline.end)) / 3600.0
    return level + baseline.drift_var * (1 + DRIFT_BLOCK_H / max(span_h, DRIFT_BLOCK_H))


def covariance(runs: Runs, baseline: Baseline, noise=None, *, walk: bool = True) -> np.ndarray:
    """The covariance matrix of the runs' residuals that `variances` implies (c Σ cᵀ of any
    coefficients c is what `variances` gives them): the runs' own noise correlated in hours
    (`noise`, when known: Baseline.noise_covariance), each bucket's and day's level error
    shared by its runs, and the shared offset."""
    cov = baseline.noise_covariance(runs) if noise is None else noise.copy()
    for bucket in np.unique(runs.bucket):
        n_b, sigma_b = _level(baseline, int(bucket))
        mine = (runs.bucket == bucket).astype(float)
        cov += np.outer(mine, mine) * sigma_b**2 / max(n_b, 1)
    for day, error in baseline.day_var.items():
        mine = (runs.day == day).astype(float)
        cov += np.outer(mine, mine) * error
    return cov + shared_offset(baseline, walk=walk)


def degrees_of_freedom(runs: Runs, baseline: Baseline) -> int:
    """The fewest baseline runs behind any bucket's scale involved (its own runs plus the
    pooled runs it is shrunk toward: SHRINK_RUNS runs' worth), at most the baseline's runs."""
    buckets = set(runs.bucket.tolist())
    return int(min([baseline.n, *(_level(baseline, b)[0] + SHRINK_RUNS for b in buckets)]))


def suffix_means(runs: Runs, resid: np.ndarray, baseline: Baseline):
    """The inverse-variance weighted mean of the last k runs and its standard error, for every
    k at once (index k − 1): what `arm` with mean_coefficients gives for each window that ends
    at the newest run (an hourly series has 72 such windows in 72 h)."""
    n = len(runs)
    k = np.arange(1, n + 1)
    in_window = np.arange(n)[None, :] >= n - k[:, None]  # row k − 1: the last k runs
    c = np.where(in_window, 1 / baseline.scales(runs) ** 2, 0.0)
    c = c / np.maximum(c.sum(axis=1, keepdims=True), np.finfo(float).tiny)
    return c @ resid, np.sqrt(variances(c, runs, baseline))


def mean_coefficients(runs: Runs, baseline: Baseline):
    """Inverse-variance weights (noisier slots count less), summing to 1."""
    w = 1 / baseline.scales(runs) ** 2
    return w / w.sum()


TREND_MIN_RUNS = 12


def trend_coefficients(runs: Runs, baseline: Baseline, now: float):
    """Weighted least squares line through the residuals: c such that c·resid is its value at
    `now`; None when the runs are too few or do not span enough time to fit one. (A line read
    at its end leans on its last run: through 7 runs, a week of a daily schedule, that run
    weighs 0.46 and one bad run carries it; through TREND_MIN_RUNS, under 0.3.)"""
    if len(runs) < TREND_MIN_RUNS or np.ptp(runs.t) <= 0:
        return None
    w = 1 / baseline.scales(runs) ** 2
    x = (runs.t - now) / DAY_S  # days before now (≤ 0)
    x_bar = float(w @ x / w.sum())
    sxx = float(w @ (x - x_bar) ** 2)
    if sxx <= 0:
        return None
    return w / w.sum() + w * (x - x_bar) * (0 - x_bar) / sxx


FADE_SDS = 2.0  # a slot's newest run this many noise scales better than the one before


def fading(resid: np.ndarray, scales: np.ndarray) -> bool:
    """Whether the newest run is better than the one before by more than FADE_SDS of their
    noise scale: a slot's two runs of one level are so one time in twelve; a short dip and an
    unlucky run of its slot a day later mostly are."""
    if len(resid) < 2:
        return False
    return float(resid[-2] - resid[-1]) > FADE_SDS * float(np.max(scales[-2:]))


SPIKE_SDS = 3.0  # a run this many of its noise scales worse than the others is a spike
WINDOW_SPIKE_SDS = 3.5  # the same within the long window, where a spike lingers for 72 h


def spike(resid: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Mask of the one run more than WINDOW_SPIKE_SDS of its own noise scale worse than the
    window's median run, when every other run is within 2 scales of it (the start of a step
    has more than one run out of line, or is about to)."""
    mask = np.zeros(len(resid), bool)
    if len(resid) >= 3:
        excess = (resid - median(resid)) / scales
        worst = int(np.argmax(excess))
        # The latest run is never a spike: nothing has contradicted it yet, and the first
        # run of a real step looks exactly like one until the next run agrees.
        followed = worst < len(resid) - 1
        if followed and excess[worst] > WINDOW_SPIKE_SDS and np.partition(excess, -2)[-2] < 2.0:
            mask[worst] = True
    return mask


def settled(resid: np.ndarray, scales: np.ndarray, mean: float) -> float:
    """The last day's shift as "back to normal" reads it: its runs' weighted mean, or their
    mean without the worst run when that run is a spike (a short dip that is over), so one bad
    run cannot hold an alert open for a day after it. Not the least of several estimates: a
    regression that persists would read as over whenever one of them dipped by chance. The
    newest run is never that spike: nothing has contradicted it yet (as in `spike`), and the
    first slow run of a real step read as "over" would reset the count toward opening."""
    settled = mean
    if len(resid) >= 3:
        worst = int(np.argmax(resid))
        others = np.delete(resid, worst)
        followed = worst < len(resid) - 1
        if followed and resid[worst] - others.mean() > SPIKE_SDS * scales[worst]:
            settled = min(settled, float(others.mean()))
    return settled
