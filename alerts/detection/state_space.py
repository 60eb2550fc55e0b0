"""The state-space arm: the runs since an onset against what the series' own state predicts.

A local-level model in real time, each run's residual (against the baseline's expected value) as

    resid_i = level(t_i) + own noise_i (+ the errors of its bucket's and day's baseline levels)

where the level is a random walk whose variance grows by q per hour and the own noise has the
variance a × (its bucket's scale / the overall scale)². q and a come from the baseline's own
residuals, as their variogram in hours: half the mean squared difference of two runs Δh apart
is a + q Δh / 2 (a line fitted over the pairs up to VARIOGRAM_H apart). Differences of runs do
not depend on where the baseline's mean landed, so a drift that a young baseline cannot see in
its autocorrelation still shows in how fast runs part with the hours between them. The level at
the week's first run is the baseline's, give or take its error and q × the hours since the
baseline's middle (at most the runs' whole spread), besides the error of the baseline's levels.

The best estimate of "worse by δ since run τ" under that model is the generalized least
squares one (what a Kalman filter of the level gives through its innovations, in closed form):
the runs before τ, back to a week, show where the level stood, and the runs since τ are judged
against that prediction. A provider that wanders raises its own bar by its real drift; on a
steady series the estimate is the runs since τ against the baseline, as the mean arms'.

The onset is not known: every run of the long window with MIN_AFTER runs after it is tried (at
most MAX_ONSETS of them), the surest taken, its p-value multiplied by the number tried.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from alerts.detection.arms import Arm, arm_skew, covariance, degrees_of_freedom, p_value
from alerts.detection.baseline import Baseline
from alerts.detection.noise import MIN_DECAY, MIN_SCALE, VARIOGRAM_H, Drift
from alerts.detection.runs import HOUR_S, Runs

STATE_ARM = "step since"
MIN_AFTER = 3  # runs since the onset: without its worst run, two still show the step
MAX_ONSETS = 9  # onsets tried (evenly spread over the long window on a dense schedule)


def state_covariance(runs: Runs, baseline: Baseline, model: Drift, noise=None) -> np.ndarray:
    """The covariance of the runs' residuals under the local-level model: own noise (by
    bucket), the level's random walk from the first run, the level's error there, and the
    baseline's bucket and day level errors (arms.covariance less its own-noise part, `noise`:
    Baseline.noise_covariance of the runs, when known).

    Where the baseline's correlation in hours (its own lags shrunk toward the pool's) says
    the level wanders further over VARIOGRAM_H than its variogram does (a flat or low
    variogram beside a clear lag correlation: the variogram is the series' alone and reads
    a drift low more often than the pooled correlation), the runs' covariance is the mean
    arms' own (arms.covariance: the runs' noise correlated in hours), without the walk since
    the baseline: the arm then reads the runs since τ against the runs before it by that
    correlation, and a provider's drift raises its bar as it raises the mean arms'."""
    if correlated_walk(baseline) > model.per_hour * VARIOGRAM_H / 2:
        return covariance(runs, baseline, noise, walk=False)
    sigma = baseline.scales(runs)
    ratio = (sigma / baseline.overall_scale) ** 2
    hours = (runs.t - runs.t[0]) / HOUR_S
    walk = model.per_hour * np.minimum(hours[:, None], hours[None, :])
    middle = (baseline.end + (baseline.start or baseline.end)) / 2
    since = max(runs.t[0] - middle, 0.0) / HOUR_S
    start = min(model.per_hour * since, baseline.overall_scale**2)
    own = np.diag(max(model.own, MIN_SCALE**2) * ratio)  # no run quieter than MIN_SCALE
    # arms.covariance less its runs' own (correlated) noise, which the walk and `own` model
    # here: the bucket and day level errors and the baseline level's shared error (without
    # Baseline.walk_var, the walk since the baseline that `start` and `walk` model here)
    if noise is None:
        noise = baseline.noise_covariance(runs)
    levels = covariance(runs, baseline, noise, walk=False)
    levels -= noise
    return own + walk + start + levels


def correlated_walk(baseline: Baseline) -> float:
    """How far the level wanders over VARIOGRAM_H by the baseline's correlation in hours
    (Baseline.correlations: w ψ^(Δh / spacing) of σ², w = min(ρ / ψ, 1)): the part of a run's
    variance that runs VARIOGRAM_H apart do not share, of the part that runs at no distance
    share, w σ² (1 − ψ^(VARIOGRAM_H / spacing)); 0 for uncorrelated runs."""
    if baseline.rho <= 0:
        return 0.0
    psi = max(baseline.phi, MIN_DECAY)
    spacing = baseline.spacing_h or 8.0
    shared = min(baseline.rho / psi, 1.0) * baseline.overall_scale**2
    return shared * (1 - psi ** (VARIOGRAM_H / spacing))


def onsets(first: int, n: int) -> np.ndarray:
    """The onset indices tried: from `first` (the long window's first run) to the last one
    that leaves MIN_AFTER runs, at most MAX_ONSETS of them (the newest always among them)."""
    last = n - MIN_AFTER
    if last < first:
        return np.zeros(0, int)
    candidates = np.arange(first, last + 1)
    if len(candidates) > MAX_ONSETS:
        picks = np.rint(np.linspace(0, len(candidates) - 1, MAX_ONSETS)).astype(int)
        candidates = candidates[np.unique(picks)]
    return candidates


def _solve(cov: np.ndarray, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """GLS coefficients of each step indicator (rows of `steps`) and their information
    hᵀΣ⁻¹h: coefficient row c satisfies c·resid = the step's estimate, c Σ cᵀ = 1 / info.
    (LAPACK's Cholesky routines called directly, as scipy.linalg.cho_factor / cho_solve call
    them: their argument checks cost more than the solve on a week's runs.)"""
    factor, status = lapack.dpotrf(cov, lower=1, clean=0)
    if status != 0:
        raise linalg.LinAlgError(f"dpotrf: {status} (the covariance is not positive definite)")
    weighted, status = lapack.dpotrs(factor, steps.T, lower=1)
    if status != 0:
        raise linalg.LinAlgError(f"dpotrs: {status}")
    weighted = weighted.T
    info = np.einsum("ij,ij->i", steps, weighted)
    return weighted / info[:, None], info


def step_arm(
    runs: Runs,
    resid: np.ndarray,
    baseline: Baseline,
    first: int,
    model: Drift,
    noise=None,
    *,
    skew: float = 0.0,
) -> Arm | None:
    """The surest "worse by a step since run τ" over the onsets τ from index `first` (the long
    window's first run) on, estimated on `runs` (the week before now: the runs before the
    onset show where the level stood) under the local-level `model`; None when no onset
    leaves MIN_AFTER runs. Its `without_worst` is the same estimate with the run since the
    onset that contributes most to it left out (one run never carries an arm). noise: the
    runs' own-noise covariance, when known (Baseline.noise_covariance). skew: a run's
    residual's skewness toward worse (Baseline.worse_skew)."""
    n = len(runs)
    tried = onsets(first, n)
    if not len(tried):
        return None
    steps = (np.arange(n)[None, :] >= tried[:, None]).astype(float)
    cov = state_covariance(runs, baseline, model, noise)
    coefficients, info = _solve(cov, steps)
    shifts = coefficients @ resid
    sds = 1 / np.sqrt(info)
    best = int(np.argmax(shifts / sds))
    c, shift, sd = coefficients[best], float(shifts[best]), float(sds[best])
    # The run since the onset that contributes most (a run before it that reads the level
    # low would otherwise stand in for the one slow run that carries the step)
    worst = int(np.argmax(np.where(steps[best] > 0, c * resid, -np.inf)))
    keep = np.flatnonzero(np.arange(n) != worst)
    without_worst = 0.0
    if steps[best][keep].any():
        c_keep, _ = _solve(cov[keep[:, None], keep], steps[best][keep][None, :])
        without_worst = float(c_keep[0] @ resid[keep])
    df = degrees_of_freedom(runs.where(steps[best] > 0), baseline)
    p = min(1.0, p_value(shift, sd, df - 1, arm_skew(c, skew)) * len(tried))
    after = resid[steps[best] > 0]
    return Arm(STATE_ARM, len(after), shift, sd, p, float(np.min(after[-2:])), without_worst)
