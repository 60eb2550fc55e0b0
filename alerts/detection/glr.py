"""The likelihood-ratio arm: one statistic per series, its bar from the series' own noise model.

Under the state-space model of the baseline (state_space: a level walking in real time plus each
run's own noise, the baseline's level errors; q and a fitted on the baseline's residuals, never
known in advance), the generalized least squares estimate ŝ_τ of "worse by a step since run τ"
has information I_τ (its variance is 1 / I_τ). The log-likelihood ratio of "worse by s since τ"
against "as usual" is s I_τ ŝ_τ − s² I_τ / 2; with the step estimated but floored at the minimum
effect δ (a step smaller than δ is no alert's business), s = max(ŝ_τ, δ):

    Λ_τ = z_τ² / 2                       where ŝ_τ ≥ δ   (z_τ = ŝ_τ √I_τ)
    Λ_τ = d_τ z_τ − d_τ² / 2             where ŝ_τ < δ   (d_τ = δ √I_τ)

and the statistic is the largest over the onsets τ of the long window (state_space.onsets): a
window-limited GLR, the statistic the likelihood-ratio oracle (bench/detector_oracle.py) uses,
with the fitted model in place of the generator's truth.

Its bar: under the fitted model with no step the z_τ are correlated standard normals (the
same runs enter every onset's estimate; their correlation is c_τ Σ c_τ'ᵀ of the estimates'
coefficients), so the chance of a statistic at least Λ is the chance that some z_τ reaches its
own threshold g_τ(Λ) (`thresholds`). That is bounded above by Hunter's inequality along the chain
of neighbouring onsets, Σ P(z_τ ≥ g_τ) − Σ P(z_τ ≥ g_τ, z_τ+1 ≥ g_τ+1) (bivariate normal tails
by Owen's T), nearly exact in the tail where the bar lies (a simulation of the fitted model
agrees: tests/alerts/test_glr.py) and computed on the evaluation's own runs (a confirmation run,
a missed one) in a tenth of a millisecond, where a simulation per baseline took several. The
state-space arm's Bonferroni factor over the onsets overstates it two to four times on a steady
series, whose onsets' estimates share most of their runs (barely on a drifting one). The arm's p-value enters the family's
bar and Benjamini–Hochberg like any arm's.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from alerts.detection.arms import Arm
from alerts.detection.baseline import Baseline, Drift, Runs
from alerts.detection.state_space import onset_estimates, without_worst

GLR_ARM = "likelihood ratio"


def statistic(z: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The floored log-likelihood ratio of each onset (last axis) from z_τ and d_τ = δ √I_τ."""
    return np.where(z >= d, z * z / 2, d * z - d * d / 2)


def glr_arm(
    runs: Runs,
    resid: np.ndarray,
    baseline: Baseline,
    first: int,
    model: Drift,
    *,
    floor: float,
    noise=None,
) -> Arm | None:
    """The largest floored log-likelihood ratio over the onsets from index `first` (the long
    window's first run) on, on `runs` (the week before now) under the local-level `model`,
    with its p-value under that model's null (null_p); None when no onset leaves
    state_space.MIN_AFTER runs. floor: the minimum effect δ (worse-oriented log units)."""
    found = onset_estimates(runs, resid, baseline, first, model, noise)
    if found is None:
        return None
    tried, steps, cov, coefficients, shifts, sds = found
    z, d = shifts / sds, floor / sds
    ratios = statistic(z, d)
    best = int(np.argmax(ratios))
    covariance = coefficients @ cov @ coefficients.T
    correlation = covariance / np.outer(sds, sds)
    p = null_p(float(ratios[best]), d, correlation)
    after = resid[steps[best] > 0]
    left = without_worst(cov, steps[best], coefficients[best], resid)
    shift, sd = float(shifts[best]), float(sds[best])
    return Arm(GLR_ARM, len(after), shift, sd, p, float(np.min(after[-2:])), left)


def thresholds(value: float, d: np.ndarray) -> np.ndarray:
    """The z_τ at which each onset's statistic reaches `value` (> 0): √(2 value) where that
    estimate reaches δ, value / d + d / 2 below it (the inverse of `statistic`)."""
    root = math.sqrt(2 * value)
    return np.where(root >= d, root, value / d + d / 2)


def null_p(value: float, d: np.ndarray, correlation: np.ndarray) -> float:
    """P(max_τ Λ_τ ≥ value) for z ~ N(0, correlation): the probability that some z_τ reaches
    its threshold, bounded above by Hunter's inequality along the chain of neighbouring
    onsets (Σ P(A_τ) − Σ P(A_τ ∩ A_τ+1)), which their strong correlation makes nearly exact
    in the tail that matters."""
    if value <= 1e-9:
        return 1.0
    g = thresholds(value, d)
    single = special.ndtr(-g)
    if len(g) < 2:
        return float(min(1.0, single.sum()))
    rho = np.clip(np.diagonal(correlation, 1), -0.999999, 0.999999)
    both = upper_orthant(g[:-1], g[1:], rho)
    return float(np.clip(single.sum() - both.sum(), single.max(), 1.0))


def upper_orthant(a: np.ndarray, b: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """P(X ≥ a, Y ≥ b) for standard normals X, Y correlated by rho (a, b > 0), by Owen's T:
    Φ₂(h, k; ρ) = ½Φ(h) + ½Φ(k) − T(h, (k − ρh) / (h√(1−ρ²))) − T(k, (h − ρk) / (k√(1−ρ²)))
    at h = −a, k = −b (both negative: no correction term)."""
    h, k = -a, -b
    root = np.sqrt(1 - rho * rho)
    return (
        (special.ndtr(h) + special.ndtr(k)) / 2
        - special.owens_t(h, (k - rho * h) / (h * root))
        - special.owens_t(k, (h - rho * k) / (k * root))
    )
