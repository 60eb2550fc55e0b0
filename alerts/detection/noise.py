"""How a series' noise hangs together in time (docs/design.md §7): what its baseline's
residuals show of the provider's state drifting, in real time.

- Lag correlations: the raw correlation of runs one to four schedule spacings apart
  (`lag_correlations`), pooled with the other series measured by the same runs and the
  provider's other endpoints (`pool`), each series' own shrunk toward the pool by how weak
  its evidence is (`shrink`), and read as a correlation ρ one spacing apart that decays by φ
  per spacing (`autocorrelation`). `mean_inflation` is what that correlation does to the
  variance of a mean of runs.
- The level's walk: the variogram of the residuals in hours, a + q Δh / 2 (`drift`), and
  where the level can have walked since the baseline (`walk_var`).

Plain numpy on arrays: baseline.py fits with these, the arms and the state-space arm read
what they give.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from alerts.detection.runs import HOUR_S

MIN_SCALE = 0.005  # log units (0.5 %): no series is treated as quieter than this
WINSOR_MADS = 8.0  # where a residual stops counting in full toward levels and scales
# The correlation of two runs' residuals falls with the hours between them, by at least this
# much per baseline spacing: a series whose lag-1 correlation is small and decays fast is not
# read as nearly perfectly correlated over minutes (see Baseline.correlations)
MIN_DECAY = 0.5
SPACING_ALIKE = 1.25  # lags of series whose spacings differ by at most this factor pool
VARIOGRAM_H = 96.0  # the longest lag (hours) the level's walk per hour is read from
# Two series' lag-1 correlations this many standard errors of their difference apart are read
# as two noises that really differ (shrink)
AGREE_SDS = 2.0


@dataclass(frozen=True, slots=True)
class Drift:
    """The local-level model read off a baseline's residuals: the own noise's variance (a) and
    the level's variance per hour (q), both in log units squared."""

    own: float
    per_hour: float


@dataclass(frozen=True, slots=True)
class Lags:
    """A baseline's raw residual correlations at 1–4 spacings (before the correction for how
    little its own mean is pinned down) and the pairs of runs behind each: what the series'
    own history says of how its noise drifts, to pool with the other series of a provider
    (pool)."""

    raw: np.ndarray
    pairs: np.ndarray
    spacing_h: float | None = None  # the spacing its lags are counted in (hours)

    def as_dict(self) -> dict:
        return {
            "raw": [float(x) for x in self.raw],
            "pairs": [float(x) for x in self.pairs],
            "spacing_h": self.spacing_h,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Lags | None:
        """The stored reading, or None when it is not one (another shape, not finite)."""
        try:
            raw = np.asarray(data["raw"], dtype=float)
            pairs = np.asarray(data["pairs"], dtype=float)
            spacing = float(data["spacing_h"])
        except (KeyError, TypeError, ValueError):
            return None
        if raw.shape != (4,) or pairs.shape != (4,) or not np.isfinite([raw, pairs]).all():
            return None
        if not math.isfinite(spacing) or spacing <= 0:
            return None
        return cls(raw, pairs, spacing)

    def alike(self, spacing_h: float | None) -> bool:
        """Whether its lags are counted in about `spacing_h` hours (within SPACING_ALIKE):
        lag 1 of a schedule of 6 runs a day is 4 hours, of 3 a day 8, and they pool only
        where they mean the same hours."""
        if self.spacing_h is None or spacing_h is None:
            return False
        return abs(math.log(self.spacing_h / spacing_h)) <= math.log(SPACING_ALIKE)


def drift(t: np.ndarray, resid: np.ndarray, overall_scale: float) -> Drift | None:
    """The variogram of the residuals (winsorized at WINSOR_MADS overall scales) in hours, a
    line a + q Δh / 2 fitted over the pairs up to VARIOGRAM_H apart (each pair once; both
    parts at least 0); None with fewer than 8 runs."""
    if len(t) < 8:
        return None
    bound = WINSOR_MADS * overall_scale
    r = np.clip(resid, -bound, bound)
    later, earlier = _within(t, VARIOGRAM_H * HOUR_S)
    lag = (t[later] - t[earlier]) / HOUR_S
    inside = lag <= VARIOGRAM_H
    x, y = lag[inside], (r[later] - r[earlier])[inside] ** 2 / 2
    if len(x) < 8 or np.ptp(x) <= 0:
        return None
    slope, intercept = _line(x, y)
    if slope <= 0:
        return Drift(float(max(np.mean(y), 0.0)), 0.0)
    if intercept <= 0:
        return Drift(0.0, float(2 * np.mean(y / x)))
    return Drift(float(intercept), float(2 * slope))


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The least-squares line y = intercept + slope x (np.polyfit(x, y, 1) in closed form,
    without its cost per call; x not all alike)."""
    x_bar, y_bar = float(x.sum()) / len(x), float(y.sum()) / len(y)
    dx = x - x_bar
    slope = float(dx @ (y - y_bar)) / float(dx @ dx)
    return slope, y_bar - slope * x_bar


def _within(t: np.ndarray, span: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (later, earlier) of the runs at times t (sorted), every pair whose runs are
    up to `span` seconds apart among them, taken offset by offset (1 run apart, then 2, …)."""
    n = len(t)
    ahead = np.searchsorted(t, t + span, side="right") - np.arange(n) - 1
    return _pairs(n, min(int(ahead.max()) + 1, n - 1))


@lru_cache(maxsize=512)
def _pairs(n: int, offsets: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i + k, i) of n runs for k = 1..offsets (≥ 1), offset by offset."""
    later = np.concatenate([np.arange(k, n) for k in range(1, offsets + 1)])
    earlier = np.concatenate([np.arange(n - k) for k in range(1, offsets + 1)])
    later.flags.writeable = earlier.flags.writeable = False
    return later, earlier


def walk_var(model_drift: Drift | None, resid: np.ndarray, overall_scale: float) -> float:
    """The variance of where the level can have walked since the baseline: the variogram's
    level part at its longest lag, q × VARIOGRAM_H / 2 (`model_drift`, drift() of `resid`), no
    more than the residuals' own variance less the variogram's own noise a (a stationary level
    wanders no further than its spread over the baseline shows). A steady series' variogram is
    flat (q ≈ 0): nothing."""
    if model_drift is None or model_drift.per_hour <= 0:
        return 0.0
    bound = WINSOR_MADS * overall_scale
    spread = float(np.var(np.clip(resid, -bound, bound))) - model_drift.own
    return max(0.0, min(model_drift.per_hour * VARIOGRAM_H / 2, spread))


def lag_correlations(resid: np.ndarray, t: np.ndarray, spacing: float | None) -> Lags | None:
    """The raw correlation of run residuals k spacings apart (k = 1..4) and the pairs behind
    each, in real time: pairs of runs are binned by the hours between them (± half a
    spacing), so a missed run, a confirmation run an hour after another or a schedule changed
    from 3 to 6 a day do not pass for another lag. None with too few runs or pairs, or runs
    within the noise floor (copied runs): no correlation."""
    if len(resid) < 8 or not spacing:
        return None
    centred = resid - resid.mean()
    variance = float(centred @ centred) / len(resid)
    if variance <= MIN_SCALE**2:
        return None
    later, earlier = _pairs(len(resid), min(len(resid), 16) - 1)  # up to 15 runs apart
    lag = np.rint((t[later] - t[earlier]) / 3600 / spacing)
    inside = (lag >= 1) & (lag <= 4)
    index = lag[inside].astype(int)
    # bincount adds in order, offset by offset, as a loop over the offsets would
    sums = np.bincount(index, weights=(centred[later] * centred[earlier])[inside], minlength=5)
    counts = np.bincount(index, minlength=5).astype(float)
    if counts[1] < 4:
        return None
    return Lags(sums[1:] / np.maximum(counts[1:], 1) / variance, counts[1:], spacing)


def pool(lags: Sequence[Lags | None]) -> Lags | None:
    """The raw correlations of several series (a provider's decode and TTFT, measured by the
    same runs) pooled, each lag weighted by its pairs: one series' 28 days are few
    independent stretches of a drift, and read its correlation far too low on some series."""
    known = [x for x in lags if x is not None]
    if not known:
        return None
    pairs = np.sum([x.pairs for x in known], axis=0)
    raw = np.sum([x.raw * x.pairs for x in known], axis=0) / np.maximum(pairs, 1)
    return Lags(raw, pairs)


def shrink(own: Lags | None, pooled: Lags | None) -> Lags | None:
    """A series' raw lag correlations shrunk toward the pool's by how weak its own evidence is
    (empirical Bayes, as _day_effects): how far the series' lag-1 reading lies from the
    others' beyond what sampling explains (each reading's variance: _reading_spread / its pairs) is
    their real difference, τ²; the series keeps τ² / (τ² + its reading's variance) of it. With
    two or three series, one difference is all the evidence of τ², and two readings of one
    drift differ by chance more often than not: only the part beyond AGREE_SDS standard errors
    of the difference counts. Series that drift alike are pooled in full; one that surely
    drifts beside one that surely does not keeps most of its own reading."""
    if own is None or pooled is None or pooled.pairs[0] <= own.pairs[0]:
        return own
    # The pool holds the series itself and others, whose pairs are pooled.pairs − own.pairs.
    others = pooled.pairs - own.pairs
    rest = (pooled.raw * pooled.pairs - own.raw * own.pairs) / np.maximum(others, 1)
    spread = _reading_spread(pooled.raw)
    sampling = spread / own.pairs[0] + spread / others[0]
    tau2 = max(0.0, (own.raw[0] - rest[0]) ** 2 - AGREE_SDS**2 * sampling) / 2
    keep = tau2 / (tau2 + spread / own.pairs[0])
    return Lags(keep * own.raw + (1 - keep) * pooled.raw, own.pairs)


def _reading_spread(raw: np.ndarray, lags: int = 64) -> float:
    """n × the variance of a lag-1 correlation read off n runs whose correlations are r_k
    (Bartlett's formula; r_k = ρ φ^(k−1) from the raw lags): 1 for independent runs, several
    times that for a drifting series, whose 28 days hold few independent stretches."""
    rho, phi = _decay(raw, 0.0)
    r = np.concatenate(([1.0], rho * phi ** np.arange(lags)))
    full = np.concatenate((r[:0:-1], r))  # r_−k … r_k
    after, before = np.concatenate((full[1:], [0.0])), np.concatenate(([0.0], full[:-1]))
    terms = full**2 + after * before - 4 * rho * full * after + 2 * full**2 * rho**2
    return max(float(terms.sum()), 1.0)


def autocorrelation(lags: Lags | None, n: int) -> tuple[float, float]:
    """The correlation ρ of run residuals one spacing apart and how slowly it decays (φ per
    spacing), from the raw lag correlations of n residuals about their own mean: every sample
    autocorrelation is low by about the variance of that mean, v = Var(mean) / σ², which a
    drifting provider makes large (its 28 days are few independent stretches):
    r = r̂ (1 − v) + v, v from the model itself."""
    if lags is None:
        return 0.0, 0.0
    rho, phi = _decay(lags.raw, 1.0 / n)
    for _ in range(2):
        v = mean_inflation(n, rho, max(phi, MIN_DECAY) if rho > 0 else 0.0)
        rho, phi = _decay(lags.raw, min(float(v) / n, 0.5))
    return rho, phi


def _decay(raw: np.ndarray, v: float) -> tuple[float, float]:
    """ρ and φ from the raw autocorrelations at lags 1–4, corrected for the mean's variance v.
    How slowly the correlation decays (at least as AR(1) would): lags 2–4 over lags 1–3, as
    r_(j+1) = φ r_j under the model; steadier than lag 2 over lag 1 alone, which a drifting
    series' noise often read as a fast decay."""
    lags = [float(r) * (1 - v) + v for r in raw]
    rho = float(np.clip(lags[0], 0.0, 0.9))
    phi = rho
    if rho > 0.05 and sum(lags[:3]) > rho:
        phi = float(np.clip(sum(lags[1:]) / sum(lags[:3]), rho, 0.97))
    return rho, phi


def mean_inflation(m, rho: float, phi: float | None = None):
    """Var(mean of m consecutive residuals) / (σ²/m) = 1 + 2 Σ_j (1 − j/m) r_j, with the
    autocorrelation r_j = ρ φ^(j−1) (φ = ρ: plain AR(1); φ > ρ: a slowly drifting shared part
    under independent noise, whose correlation starts low and decays slowly). m may be an
    array (the inflation of every window length at once); the sum is in closed form, as an
    hourly series' windows are long."""
    phi = rho if phi is None else phi
    m_arr = np.maximum(np.asarray(m, dtype=float), 1.0)
    if rho <= 0:
        out = np.ones_like(m_arr)
    elif phi >= 1.0 - 1e-9:  # r_j = ρ for every lag
        out = 1 + rho * (m_arr - 1)
    else:
        # Σ_{j<m} φ^(j−1) and Σ_{j<m} j φ^(j−1), geometric series
        head = (1 - phi ** (m_arr - 1)) / (1 - phi)
        weighted = (1 - m_arr * phi ** (m_arr - 1) + (m_arr - 1) * phi**m_arr) / (1 - phi) ** 2
        out = 1 + 2 * rho * (head - weighted / m_arr)
    return float(out) if np.ndim(m) == 0 else out
