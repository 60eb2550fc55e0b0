"""The state-space arm: each recent run tested against what the series' own state predicts.

The baseline's noise model (baseline.Baseline, arms.covariance) is a state-space model in real
time: a run's residual is a shared offset (the baseline level's error and the drift slower than
its lags see) + a provider state that decays by ψ per baseline spacing (ρ of it shared by runs
one spacing apart) + the run's own noise (its time-of-day bucket's scale) + the error of its
bucket's and day's levels. Under that model the best estimate of "worse by δ since run τ" is
the generalized least squares one (what a Kalman filter of the state gives through its
innovations, in closed form): the runs before τ, back to a week, pin down where the provider's
state and the offset stand, and the runs since τ are judged against that prediction. A provider
that wanders raises its own bar by its real drift (its runs before τ were already there); on
independent noise the estimate is the runs since τ against the baseline, as the mean arms.

The onset is not known: every run of the long window with `MIN_AFTER` runs after it is tried
(at most MAX_ONSETS of them), the surest taken, its p-value multiplied by the number tried.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from alerts.detection.arms import Arm, covariance, degrees_of_freedom, p_value
from alerts.detection.baseline import Baseline, Runs

STATE_ARM = "step since"
MIN_AFTER = 2  # runs since the onset: one run never carries an arm
MAX_ONSETS = 9  # onsets tried (evenly spread over the long window on a dense schedule)


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
    hᵀΣ⁻¹h: coefficient row c satisfies c·resid = the step's estimate, c Σ cᵀ = 1 / info."""
    factor = linalg.cho_factor(cov, lower=True, check_finite=False)
    weighted = linalg.cho_solve(factor, steps.T, check_finite=False).T
    info = np.einsum("ij,ij->i", steps, weighted)
    return weighted / info[:, None], info


def step_arm(runs: Runs, resid: np.ndarray, baseline: Baseline, first: int) -> Arm | None:
    """The surest "worse by a step since run τ" over the onsets τ from index `first` (the long
    window's first run) on, estimated on `runs` (the week before now: the runs before the
    onset pin down the provider's state) with the baseline's covariance; None when no onset
    leaves MIN_AFTER runs. Its `without_worst` is the same estimate with the run that
    contributes most to it left out (one run never carries an arm)."""
    n = len(runs)
    tried = onsets(first, n)
    if not len(tried):
        return None
    steps = (np.arange(n)[None, :] >= tried[:, None]).astype(float)
    cov = covariance(runs, baseline)
    coefficients, info = _solve(cov, steps)
    shifts = coefficients @ resid
    sds = 1 / np.sqrt(info)
    best = int(np.argmax(shifts / sds))
    c, shift, sd = coefficients[best], float(shifts[best]), float(sds[best])
    contributions = c * resid
    worst = int(np.argmax(contributions))
    keep = np.arange(n) != worst
    without_worst = 0.0
    if steps[best][keep].any():
        c_keep, _ = _solve(cov[np.ix_(keep, keep)], steps[best][keep][None, :])
        without_worst = float(c_keep[0] @ resid[keep])
    df = degrees_of_freedom(runs.where(steps[best] > 0), baseline)
    p = min(1.0, p_value(shift, sd, df - 1) * len(tried))
    after = resid[steps[best] > 0]
    return Arm(STATE_ARM, len(after), shift, sd, p, float(np.min(after[-2:])), without_worst)
