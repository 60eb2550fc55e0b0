"""The sequential arm: one CUSUM-like statistic per series, its bar set by simulation of the
series' own fitted noise model, so that it opens an alert alone (docs/alerts.md).

On the state-space model the baseline fits (state_space.state_covariance: run-shared noise,
the level walking in real time, the baseline's level errors), for every onset τ of the long
window with MIN_AFTER runs after it, the GLS estimate ŝ_τ of "worse by a step since τ" and its
information I_τ. The statistic is Page's CUSUM in its generalized form, the log likelihood
ratio of a step since τ against none, maximised over τ and over steps of at least the
minimum effect δ:

    S = max_τ  s_τ I_τ ŝ_τ − s_τ² I_τ / 2,   s_τ = max(ŝ_τ, δ)

Its bar is read off a parametric bootstrap of the fitted model: SIMULATIONS draws of the week's
residuals from the covariance, the statistic now and at the evaluation before (the same runs
less the newest), and the bar h the level that the statistic crosses upward (now above, before
not) in a share of draws that makes `episodes` crossings a series-month at `runs_per_day`
evaluations a day. One crossing is one false episode: the arm may open an alert by itself.
The draws are common random numbers (the same normals for every model), and a bar is kept
for the model it was simulated on, cached by the model rounded (_key), so that the refits of
a baseline from one run to the next (its model moving a little) share one simulation.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from alerts.detection.arms import Arm, degrees_of_freedom
from alerts.detection.baseline import HOUR_S, VARIOGRAM_H, Baseline, Drift, Runs
from alerts.detection.state_space import _solve, correlated_walk, state_covariance

SEQ_ARM = "sequential"
MIN_AFTER = 2  # runs since the onset (one run never carries an arm: without it one is left)
SIMULATIONS = 20_000
# The walk per run against the own noise, in half-log steps, below which a walk is none: e⁻⁶
# of the own noise's variance a run moves the bar by nothing the simulation can see
WALK_FLOOR = -12
CACHE = 4096  # bars kept (least recently used dropped)
_BARS: OrderedDict = OrderedDict()
_NORMALS: dict[int, np.ndarray] = {}


def _normals(n: int) -> np.ndarray:
    """SIMULATIONS standard normal vectors of length n, the same every time (common random
    numbers: a bar moves with the model, not with the draw)."""
    if n not in _NORMALS:
        _NORMALS[n] = np.random.default_rng(28 + n).standard_normal((n, SIMULATIONS))
    return _NORMALS[n]


def statistic(shifts: np.ndarray, info: np.ndarray, delta: float) -> np.ndarray:
    """The generalized CUSUM over onsets (axis 0): max of s I ŝ − s² I / 2, s = max(ŝ, δ)."""
    s = np.maximum(shifts, delta)
    return np.max(s * info[:, None] * shifts - s * s * info[:, None] / 2, axis=0)


def _steps(n: int, first: int) -> np.ndarray:
    tried = np.arange(max(first, 0), n - MIN_AFTER + 1)
    return (np.arange(n)[None, :] >= tried[:, None]).astype(float)


def _draws(cov: np.ndarray, df: int | None, skew: float = 0.0) -> np.ndarray:
    """SIMULATIONS draws of residuals with covariance `cov`, each scaled by √(df / χ²_df) when
    df is given: the scale is itself an estimate from the baseline's runs (multivariate t).
    skew: a run's skewness toward worse (Baseline.worse_skew), given each run's normal
    through the Cornish–Fisher expansion z + (g / 6)(z² − 1) before they are correlated."""
    n = len(cov)
    normals = _normals(n)
    if skew > 0:
        normals = normals + skew / 6 * (normals * normals - 1)
        normals /= math.sqrt(1 + (skew / 6) ** 2 * 2)
    draws = np.linalg.cholesky(cov) @ normals
    if df:
        chi2 = np.random.default_rng(df).chisquare(df, SIMULATIONS)
        draws *= np.sqrt(df / chi2)
    return draws


def simulate_bar(
    cov: np.ndarray,
    first: int,
    delta: float,
    per_evaluation: float,
    df: int | None = None,
    skew: float = 0.0,
) -> tuple[float, np.ndarray]:
    """The bar h on the statistic that the fitted model (the residuals' covariance `cov`, the
    onsets from index `first`) crosses upward in a share `per_evaluation` of evaluations:
    the statistic now above h, and at the evaluation before (the same runs less the newest) not;
    and the simulated statistics now, sorted (the null a p-value is read off)."""
    n = len(cov)
    draws = _draws(cov, df, skew)
    now_steps, before_steps = _steps(n, first), _steps(n - 1, first)
    c_now, i_now = _solve(cov, now_steps)
    now = statistic(c_now @ draws, i_now, delta)
    if len(before_steps):
        c_before, i_before = _solve(cov[:-1, :-1], before_steps)
        before = statistic(c_before @ draws[:-1], i_before, delta)
    else:
        before = np.full(SIMULATIONS, -np.inf)
    # An upcrossing of h: before ≤ h < now. Among the draws with before < now their count at
    # h is #(before ≤ h) − #(now ≤ h); the bar is the lowest h (one of the draws' statistics
    # now) where it falls to the share wanted.
    rising = before < now
    up_now, up_before = np.sort(now[rising]), np.sort(before[rising])
    counts = np.searchsorted(up_before, up_now, side="right") - np.arange(1, len(up_now) + 1)
    wanted = per_evaluation * SIMULATIONS
    over = np.flatnonzero(counts > wanted)
    h = (
        float(up_now[over[-1] + 1])
        if len(over) and over[-1] + 1 < len(up_now)
        else float(up_now[-1] if not len(over) else np.max(now))
    )
    if not len(over):
        h = float(up_now[0]) if len(up_now) else 0.0
    return h, np.sort(now)


def _key(
    baseline: Baseline, model: Drift, runs: Runs, first: int, delta: float, df: int, skew: float
) -> tuple:
    """The fitted model, rounded: what a refit one run later barely moves."""
    own = max(model.own, 1e-12)
    spacing = baseline.spacing_h or 8.0
    walk = max(round(2 * math.log(max(model.per_hour * spacing, 1e-12) / own)), WALK_FLOOR)
    return (
        len(runs),
        first,
        round(spacing),
        walk,
        round(3 * math.log(delta * delta / own)),
        round(baseline.rho * 5) / 5,
        round(baseline.phi * 5) / 5,
        round(2 * math.log(baseline.overall_scale**2 / own)),
        baseline.n >= 40,
        min(df // 10, 6),
        round(skew * 4) / 4,
    )


def sequential_arm(
    runs: Runs,
    resid: np.ndarray,
    baseline: Baseline,
    first: int,
    model: Drift,
    noise: np.ndarray | None,
    *,
    delta: float,
    episodes: float,
    runs_per_day: float,
    walk: float = 0.0,
    skew: float = 0.0,
) -> Arm | None:
    """The sequential arm on the week's runs (as state_space.step_arm's), its onsets from
    `first` (the long window's first run); None when no onset leaves MIN_AFTER runs. delta:
    the minimum effect (worse-oriented log); episodes: false episodes a series-month its bar
    allows at `runs_per_day` evaluations a day; walk: the simulated model's level walks this
    many times more than the fitted one besides (a walk read off one series' 28 days is read
    low as often as not: _simulated); skew: a run's residual's skewness toward worse
    (Baseline.worse_skew), simulated through each run's draw. Its p_value is the share of
    simulated draws whose statistic is at least this one's, `bar` the share at the bar,
    `over` whether the statistic is above the bar (what makes it positive)."""
    n = len(runs)
    steps = _steps(n, first)
    if not len(steps) or n - 1 - first < MIN_AFTER:
        return None
    cov = state_covariance(runs, baseline, model, noise)
    coefficients, info = _solve(cov, steps)
    shifts = coefficients @ resid
    value = float(statistic(shifts[:, None], info, delta)[0])
    df = max(degrees_of_freedom(runs.where(steps[-1] > 0), baseline) - 1, 2)
    skew = round(skew * 4) / 4
    key = _key(baseline, model, runs, first, delta, df, skew)
    if key in _BARS:
        _BARS.move_to_end(key)
        h, tail = _BARS[key]
    else:
        per_evaluation = episodes / (30.0 * runs_per_day)
        simulated = _simulated(cov, runs, baseline, model, walk)
        h, tail = simulate_bar(simulated, first, delta, per_evaluation, df, skew)
        _BARS[key] = (h, tail)
        if len(_BARS) > CACHE:
            _BARS.popitem(last=False)
    p = _share_above(tail, value)
    bar = _share_above(tail, h)
    sd = 1 / np.sqrt(info)
    best = int(np.argmax(np.maximum(shifts, delta) * info * shifts))
    c, shift = coefficients[best], float(shifts[best])
    worst = int(np.argmax(np.where(steps[best] > 0, c * resid, -np.inf)))
    keep = np.flatnonzero(np.arange(n) != worst)
    without_worst = 0.0
    if steps[best][keep].any():
        c_keep, _ = _solve(cov[np.ix_(keep, keep)], steps[best][keep][None, :])
        without_worst = float(c_keep[0] @ resid[keep])
    after = resid[steps[best] > 0]
    return Arm(
        SEQ_ARM,
        len(after),
        shift,
        float(sd[best]),
        p,
        float(np.min(after[-2:])),
        without_worst,
        bar=bar,
        over=value > h,
    )


def _simulated(
    cov: np.ndarray, runs: Runs, baseline: Baseline, model: Drift, walk: float
) -> np.ndarray:
    """The covariance the bar is simulated on: the fitted one plus `walk` times its level's
    walk in hours (the larger of the variogram's and the correlation's, per hour) from the
    week's first run on."""
    if walk <= 0:
        return cov
    per_hour = max(model.per_hour, correlated_walk(baseline) * 2 / VARIOGRAM_H)
    hours = (runs.t - runs.t[0]) / HOUR_S
    return cov + walk * per_hour * np.minimum(hours[:, None], hours[None, :])


def _share_above(sorted_null: np.ndarray, value: float) -> float:
    """The share of the sorted null draws at least `value` (at least one draw's worth)."""
    above = len(sorted_null) - int(np.searchsorted(sorted_null, value, side="left"))
    return max(above, 1) / len(sorted_null)
