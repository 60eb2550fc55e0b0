"""A series' baseline model (docs/design.md §7), fitted on the runs (runs.py) of its
baseline window:

    log value ≈ level + time_of_day[bucket] + weekend × is_weekend + day[day of week] + noise

(level + time_of_day[bucket]: the mean weekday run of that bucket; weekend: the mean weekend
run against it; day: a weekly cycle beyond the weekend, shrunk toward none, once every day of
the week has enough runs; a bucket with too few runs uses the overall level; means winsorized around
the medians, as the arms average runs and skewed noise sets the mean apart from the median),
with a noise scale per time-of-day bucket (some hours are noisier than others) and the lag-1
autocorrelation of the run residuals (the provider's state drifts slowly), so each series is
judged against its own history's noise, not against a threshold tuned on someone else's.

A Baseline is plain data (`as_dict` / `from_dict`): an open alert stores the one it opened
against and keeps using it until the series is really back (evaluate.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from alerts.detection.noise import (
    MIN_DECAY,
    MIN_SCALE,
    WINSOR_MADS,
    Drift,
    Lags,
    autocorrelation,
    drift,
    lag_correlations,
    mean_inflation,
    shrink,
    walk_var,
)
from alerts.detection.runs import Runs

# Noise scales are shrunk toward the series' overall scale by this many runs' worth of weight,
# so a bucket with 4 runs cannot claim to be nearly noiseless.
SHRINK_RUNS = 6.0
DRIFT_BLOCK_H = 72.0  # the blocks whose means show a drift slower than the lags see
# A run this close to the hour its bucket's level was measured at (or within the spread of the
# bucket's runs and REACH_PAD_H) reads that level; further off, the daily curve (DailyCurve)
REACH_MIN_H = 1.0
REACH_PAD_H = 0.5
MIN_GAP_H = 2.0  # three buckets' hours closer than this pin no daily curve down
# A baseline's skewness counts only beyond this many standard errors of a normal series' own
# (Baseline.worse_skew)
SKEW_SDS = 2.0


def median(x: np.ndarray) -> float:
    """np.median without its overhead (tens of µs a call; the detector takes dozens)."""
    s = np.sort(x)
    n = len(s)
    return float((s[(n - 1) // 2] + s[n // 2]) / 2)


def _mad_scale(x: np.ndarray) -> float:
    return 1.4826 * median(np.abs(x - median(x))) if len(x) else 0.0


@dataclass(frozen=True, slots=True)
class DailyCurve:
    """The expected time-of-day effect at any hour, from the buckets' levels at the hours they
    were measured (3 or more): the day's first harmonic fitted to them, plus what it leaves at
    each point interpolated linearly around the clock, so it passes through every point. Three
    runs a day 8 h apart measure the harmonic exactly; a run between them (a confirmation run)
    reads the daily cycle at its own hour, not the level of a bucket measured hours away (on a
    ±10 % daily sine, 2 h off is up to 5 % off)."""

    coef: np.ndarray  # the harmonic: mean, cosine and sine parts
    # The points' hours, sorted, with the last before 0 and the first past 24, and what the
    # harmonic leaves at each of them (None: three points, which it passes through exactly)
    hours: np.ndarray | None
    left: np.ndarray | None

    @classmethod
    def through(cls, points: Sequence[tuple[float, float]]) -> DailyCurve | None:
        """The curve through (hour, effect) points sorted by hour; None with fewer than 3, or
        3 of which two lie within MIN_GAP_H (they pin no harmonic down)."""
        n = len(points)
        if n < 3:
            return None
        hours = np.fromiter((h for h, _ in points), float, n)
        values = np.fromiter((v for _, v in points), float, n)
        basis = _harmonic(hours)
        if n == 3:
            gaps = (hours[1] - hours[0], hours[2] - hours[1], hours[0] + 24.0 - hours[2])
            if min(gaps) < MIN_GAP_H:
                return None
            return cls(np.linalg.solve(basis, values), None, None)  # 8 h apart: exactly
        coef = np.linalg.solve(basis.T @ basis, basis.T @ values)  # least squares
        left = values - basis @ coef
        around = np.concatenate(([hours[-1] - 24.0], hours, [hours[0] + 24.0]))
        return cls(coef, around, np.concatenate(([left[-1]], left, [left[0]])))

    def __call__(self, hour: np.ndarray) -> np.ndarray:
        angle = np.asarray(hour, dtype=float) * (2 * math.pi / 24.0)
        mean, cos, sin = self.coef
        out = mean + cos * np.cos(angle) + sin * np.sin(angle)
        if self.hours is not None:
            out += np.interp(hour, self.hours, self.left)
        return out


def _harmonic(hour: np.ndarray) -> np.ndarray:
    angle = hour * (2 * math.pi / 24.0)
    basis = np.empty((len(hour), 3))
    basis[:, 0], basis[:, 1], basis[:, 2] = 1.0, np.cos(angle), np.sin(angle)
    return basis


@dataclass(frozen=True, slots=True)
class Baseline:
    """A fitted baseline: expected log value and noise of a run at a given slot.

    scale: robust noise scale (log units) of one run's residual per bucket, shrunk toward the
    overall one; rho: lag-1 autocorrelation of run residuals (≥ 0); n: runs it was fitted on;
    phi: how slowly that correlation decays; end: time (Unix s) of its last run.
    """

    level: float
    time_of_day: dict[int, float]
    weekend: float
    scale: dict[int, float]
    overall_scale: float
    rho: float
    n: int
    end: float
    fitted_week: bool = False
    phi: float = 0.0  # decay of the autocorrelation beyond lag 1 (see mean_inflation)
    start: float | None = None  # time (Unix s) of its first run
    counts: dict[int, int] = field(default_factory=dict)  # baseline runs per bucket
    # Day-of-week effects (0 = Monday) on top of the weekend one, shrunk toward none, and the
    # variance of each estimate: a weekly cycle that the weekend alone does not describe.
    day: dict[int, float] = field(default_factory=dict)
    day_var: dict[int, float] = field(default_factory=dict)
    # The median hours between its runs: the correlation's unit of time (None: a baseline
    # stored before it was kept; the runs' own spacing stands in)
    spacing_h: float | None = None
    # The variance of a 72 h mean that a drift slower than the lags adds (log units²)
    drift_var: float = 0.0
    # How far the level walks within VARIOGRAM_H, as the variogram of its runs shows it
    # (q × VARIOGRAM_H / 2, log units²): where it can have walked since the baseline (walk_var)
    walk_var: float = 0.0
    # That variogram's model (the state-space arm's), fitted once with the baseline; not
    # stored (None on a baseline read back: a frozen one has no state-space arm)
    level_walk: Drift | None = field(default=None, repr=False, compare=False)
    # The skewness of its runs' residuals (their third standardized moment, winsorized as the
    # scales are; log units, as the values): a slow replica or throttled runs make a run's
    # worse side far longer than its better side (worse_skew)
    skew: float = 0.0
    # The hour of the day each bucket's level was measured at (the median hour of its runs)
    # and how far from it a run still reads that level (hours): a run further off (a
    # confirmation run between scheduled ones) reads the daily curve through the buckets'
    # levels at its own hour (DailyCurve). Empty (a baseline stored before): bucket levels.
    tod_hour: dict[int, float] = field(default_factory=dict)
    tod_reach: dict[int, float] = field(default_factory=dict)
    _tod: np.ndarray = field(init=False, repr=False, compare=False)
    _scale: np.ndarray = field(init=False, repr=False, compare=False)
    _day: np.ndarray = field(init=False, repr=False, compare=False)
    # What depends on nothing but the baseline, computed once when first asked (`memo`)
    _memo: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Lookup tables by bucket, built once: the detector reads them a dozen times a call.
        tod = [self.time_of_day.get(b, 0.0) for b in range(4)]
        object.__setattr__(self, "_tod", np.array(tod))
        scale = [self.scale.get(b, self.overall_scale) for b in range(4)]
        object.__setattr__(self, "_scale", np.array(scale))
        object.__setattr__(self, "_day", np.array([self.day.get(d, 0.0) for d in range(7)]))
        object.__setattr__(self, "_memo", {})

    def memo(self, key: str, compute):
        """compute(self), once per baseline: the baseline is frozen, the arms ask it again."""
        if key not in self._memo:
            self._memo[key] = compute(self)
        return self._memo[key]

    def expected(self, runs: Runs) -> np.ndarray:
        tod = self._tod[runs.bucket]
        if len(self.tod_hour) >= 3:
            hour, reach = self.memo("hours", _hours_by_bucket)
            off = ~(np.abs(runs.hour - hour[runs.bucket]) <= reach[runs.bucket])
            if off.any():
                curve = self.memo("daily_curve", _daily_curve)
                if curve is not None:
                    tod[off] = curve(runs.hour[off])
        return self.level + tod + self.weekly(runs)

    def weekly(self, runs: Runs) -> np.ndarray:
        """The week's part of each run's expected value: weekend and day-of-week effects."""
        return self.weekend * runs.weekend + self._day[runs.day]

    def scales(self, runs: Runs) -> np.ndarray:
        return self._scale[runs.bucket]

    def correlations(self, t: np.ndarray) -> np.ndarray:
        """The correlation of the residuals of runs at times t (Unix s), from the hours between
        them: w ψ^(Δh / spacing), ψ = max(φ, MIN_DECAY), w = min(ρ / ψ, 1), so that runs one
        spacing apart correlate by ρ and the correlation decays in real time. Runs an hour
        apart (a confirmation run) share nearly all of a drifting provider's state; runs a
        day apart little of a fast-decaying one; a schedule of 6 a day is judged as 3."""
        t = np.asarray(t, dtype=float)
        if self.rho <= 0 or len(t) < 2:
            return np.eye(len(t))
        spacing = self.spacing_h or _spacing_h(t) or 8.0
        out = self.correlation(np.abs(t[:, None] - t[None, :]), spacing)
        np.fill_diagonal(out, 1.0)
        return out

    def correlation(self, apart: np.ndarray, spacing: float) -> np.ndarray:
        """The correlation of two different runs' residuals `apart` seconds apart on a schedule
        of runs `spacing` hours apart, with ρ > 0 (see correlations)."""
        psi = max(self.phi, MIN_DECAY)
        return min(self.rho / psi, 1.0) * psi ** (apart / 3600.0 / spacing)

    def noise_covariance(self, runs: Runs) -> np.ndarray:
        """The covariance of the runs' own noise: their scales, correlated by the hours between
        them (correlations). With `spacing_h` known, entry by entry: a submatrix of a window's
        is its runs' own (`arms.variances` takes it so)."""
        sigma = self.scales(runs)
        return self.correlations(runs.t) * sigma[:, None] * sigma[None, :]

    def worse_skew(self, sign: float) -> float:
        """The skewness g of a run's residual toward worse (`sign`: +1 where higher is worse,
        −1 where lower is), shrunk by how much of it n normal runs show by chance (standard
        error e = √(6 / n)): g (1 − (SKEW_SDS e / g)²), none under SKEW_SDS standard errors. A
        normal series' chance skewness is none, a clearly skewed one keeps most of its own;
        0 when the worse side is not the longer one."""
        g = sign * self.skew
        chance = SKEW_SDS**2 * 6.0 / max(self.n, 1)
        return g - chance / g if g > 0 and g * g > chance else 0.0

    def shifted(self, log_shift: float) -> Baseline:
        """The same baseline at another level (an accepted step): shapes and noise unchanged."""
        return replace(self, level=self.level + log_shift)

    def as_dict(self) -> dict:
        return {
            "level": self.level,
            "time_of_day": {str(k): v for k, v in self.time_of_day.items()},
            "weekend": self.weekend,
            "scale": {str(k): v for k, v in self.scale.items()},
            "overall_scale": self.overall_scale,
            "rho": self.rho,
            "n": self.n,
            "end": self.end,
            "fitted_week": self.fitted_week,
            "phi": self.phi,
            "start": self.start,
            "counts": {str(k): v for k, v in self.counts.items()},
            "day": {str(k): v for k, v in self.day.items()},
            "day_var": {str(k): v for k, v in self.day_var.items()},
            "spacing_h": self.spacing_h,
            "drift_var": self.drift_var,
            "walk_var": self.walk_var,
            "skew": self.skew,
            "tod_hour": {str(k): v for k, v in self.tod_hour.items()},
            "tod_reach": {str(k): v for k, v in self.tod_reach.items()},
        }

    @classmethod
    def from_dict(cls, data: dict) -> Baseline:
        return cls(
            level=float(data["level"]),
            time_of_day={int(k): float(v) for k, v in data["time_of_day"].items()},
            weekend=float(data["weekend"]),
            scale={int(k): float(v) for k, v in data["scale"].items()},
            overall_scale=float(data["overall_scale"]),
            rho=float(data["rho"]),
            n=int(data["n"]),
            end=float(data["end"]),
            fitted_week=bool(data.get("fitted_week", False)),
            phi=float(data.get("phi", data["rho"])),
            start=None if data.get("start") is None else float(data["start"]),
            counts={int(k): int(v) for k, v in data.get("counts", {}).items()},
            day={int(k): float(v) for k, v in data.get("day", {}).items()},
            day_var={int(k): float(v) for k, v in data.get("day_var", {}).items()},
            spacing_h=None if data.get("spacing_h") is None else float(data["spacing_h"]),
            drift_var=float(data.get("drift_var", 0.0)),
            walk_var=float(data.get("walk_var", 0.0)),
            skew=float(data.get("skew", 0.0)),
            tod_hour={int(k): float(v) for k, v in data.get("tod_hour", {}).items()},
            tod_reach={int(k): float(v) for k, v in data.get("tod_reach", {}).items()},
        )


def _hours_by_bucket(model: Baseline) -> tuple[np.ndarray, np.ndarray]:
    """Each bucket's measured hour (NaN: no level of its own) and reach, indexed by bucket."""
    hour = [
        model.tod_hour.get(b, math.nan) if b in model.time_of_day else math.nan for b in range(4)
    ]
    reach = [model.tod_reach.get(b, 0.0) for b in range(4)]
    return np.array(hour), np.array(reach)


def _daily_curve(model: Baseline) -> DailyCurve | None:
    """The daily curve through the buckets' levels at their hours (None: under 3)."""
    points = sorted(
        (model.tod_hour[b], model.time_of_day[b]) for b in model.tod_hour if b in model.time_of_day
    )
    return DailyCurve.through(points)


@dataclass(frozen=True, slots=True)
class Shape:
    """A baseline's levels and noise scales before their correlation is known (fit_shape):
    its residuals on the runs it was fitted on and their raw correlations (None: too few)."""

    model: Baseline
    resid: np.ndarray
    lags: Lags | None


def fit(
    runs: Runs, *, min_bucket_runs: int, min_week_runs: int, pool: Lags | None = None
) -> Baseline:
    """Fit the baseline model on runs (needs ≥ 2 runs): medians, then winsorized means, so one
    odd run or one outage-slowed afternoon barely moves it. pool: the raw correlations of the
    other series evaluated with it (pool), which its own are shrunk toward."""
    shape = fit_shape(runs, min_bucket_runs=min_bucket_runs, min_week_runs=min_week_runs)
    return correlate(shape, runs, pool)


def fit_shape(runs: Runs, *, min_bucket_runs: int, min_week_runs: int) -> Shape:
    """The levels, day effects and noise scales of the baseline model, and the raw lag
    correlations of its residuals."""
    fitted_week = bool(
        runs.weekend.sum() >= min_week_runs and (~runs.weekend).sum() >= min_week_runs
    )
    model, bound = _levels(runs, min_bucket_runs=min_bucket_runs, fitted_week=fitted_week)
    resid = runs.log_value - model.expected(runs)
    if fitted_week:
        day, day_var = _day_effects(np.clip(resid, -bound, bound), runs.day, min_week_runs)
        model = replace(model, day=day, day_var=day_var)
        resid = runs.log_value - model.expected(runs)
    scale, overall, counts = _scales(resid, runs.bucket, levels=len(model.time_of_day))
    spacing = _spacing_h(runs.t)
    model = replace(
        model,
        skew=_skewness(resid),
        scale=scale,
        overall_scale=overall,
        fitted_week=fitted_week,
        counts=counts,
        start=float(runs.t[0]),
        spacing_h=spacing,
    )
    return Shape(model, resid, lag_correlations(resid, runs.t, spacing))


def correlate(shape: Shape, runs: Runs, pool: Lags | None = None) -> Baseline:
    """The fitted baseline: the shape's correlation in hours (its own lags shrunk toward the
    pool's, shrink), its noise scales grown for a drift, and the drift slower than the lags."""
    model, resid = shape.model, shape.resid
    rho, phi = autocorrelation(shrink(shape.lags, pool), len(runs))
    scale, overall = model.scale, model.overall_scale
    # A drifting series' residuals about its own levels are closer to them than new runs will
    # be, by the variance of those levels (v of σ²; 1/n for independent runs, which the
    # scales already allow for): the scales grow by 1 / √(1 − v) past that, once the
    # correlation is one the baseline's length tells from none (ρ > 2 / √n; a young series'
    # chance correlations would otherwise make every young baseline look noisier than it is).
    if rho > 2 / math.sqrt(len(runs)):
        v = float(mean_inflation(len(runs), rho, max(phi, MIN_DECAY))) / len(runs)
        grow = math.sqrt((1 - 1 / len(runs)) / (1 - min(v, 0.5)))
        scale = {b: x * grow for b, x in scale.items()}
        overall *= grow
    model = replace(model, scale=scale, overall_scale=overall, rho=rho, phi=phi)
    level_walk = drift(runs.t, resid, model.overall_scale)
    return replace(
        model,
        drift_var=_drift_var(model, runs, resid),
        walk_var=walk_var(level_walk, resid, model.overall_scale),
        level_walk=level_walk,
    )


def _spacing_h(t: np.ndarray) -> float | None:
    """The median hours between consecutive runs (None for fewer than two)."""
    return float(median(np.diff(t))) / 3600.0 if len(t) > 1 else None


def _drift_var(model: Baseline, runs: Runs, resid: np.ndarray) -> float:
    """How much more the means of DRIFT_BLOCK_H blocks of the baseline's residuals vary than
    the runs' noise and correlation say they should: the variance a provider's slow drift
    (hours to days, slower than the lags `autocorrelation` sees) adds to any window's mean.
    Needs three blocks with two runs or more; the positive part of the excess."""
    block = ((runs.t - runs.t[0]) // (DRIFT_BLOCK_H * 3600.0)).astype(int)
    clipped = np.clip(resid, -WINSOR_MADS * model.overall_scale, WINSOR_MADS * model.overall_scale)
    edges = [0, *(np.flatnonzero(block[1:] != block[:-1]) + 1).tolist(), len(block)]
    # Runs are sorted: each block is a stretch of them, runs[lo:hi]
    spans = [(lo, hi) for lo, hi in zip(edges[:-1], edges[1:], strict=True) if hi - lo >= 2]
    blocks = len(spans)
    if blocks < 3:
        return 0.0
    observed, expected = 0.0, 0.0
    for (lo, hi), total in zip(spans, _block_noise_sums(model, runs, spans), strict=True):
        observed += _mean(clipped[lo:hi]) ** 2
        expected += total / (hi - lo) ** 2
    # The block means' squares about the fitted levels (which took one block's worth out).
    return max(0.0, (observed / (blocks - 1) - expected / blocks))


def _block_noise_sums(model: Baseline, runs: Runs, spans: list[tuple[int, int]]) -> list[float]:
    """The sum of each block's own-noise covariance matrix (Baseline.noise_covariance of
    runs[lo:hi]), every block's entries computed at once, each block summed as its matrix."""
    if not model.spacing_h:  # each block would read its own spacing
        return [float(model.noise_covariance(runs.between_index(*s)).sum()) for s in spans]
    sizes = tuple(hi - lo for lo, hi in spans)
    rows, cols, same = _block_entries(sizes)
    kept = np.concatenate([np.arange(lo, hi) for lo, hi in spans])
    t, sigma = runs.t[kept], model.scales(runs)[kept]
    if model.rho > 0:
        corr = model.correlation(np.abs(t[rows] - t[cols]), model.spacing_h)
        corr[same] = 1.0
    else:
        corr = same.astype(float)
    cov = corr * sigma[rows] * sigma[cols]
    ends = np.cumsum([0, *(m * m for m in sizes)]).tolist()
    return [float(cov[a:b].sum()) for a, b in zip(ends[:-1], ends[1:], strict=True)]


@lru_cache(maxsize=1024)
def _block_entries(sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row and column of every entry of square blocks of these sizes laid one after another
    (each block's entries row by row, as its matrix holds them), and which are diagonal."""
    blocks = list(zip(np.cumsum([0, *sizes[:-1]]).tolist(), sizes, strict=True))
    rows = np.concatenate([np.repeat(np.arange(s, s + m), m) for s, m in blocks])
    cols = np.concatenate([np.tile(np.arange(s, s + m), m) for s, m in blocks])
    same = rows == cols
    for array in (rows, cols, same):
        array.flags.writeable = False
    return rows, cols, same


def _levels(runs: Runs, *, min_bucket_runs: int, fitted_week: bool) -> tuple[Baseline, float]:
    """The overall, time-of-day and weekend levels (a Baseline with no noise yet), and the
    bound residuals are winsorized at."""
    y = runs.log_value
    # Levels come from weekday runs when the weekend is modelled (so weekends cannot drag
    # them), then the weekend effect is the median weekend run against its slot's level.
    typical = ~runs.weekend if fitted_week else np.ones(len(runs), bool)
    level = median(y[typical])
    hours, reach, on = _bucket_hours(runs, typical)
    time_of_day: dict[int, float] = {}
    for b in sorted(set(runs.bucket.tolist())):
        in_bucket = y[typical & on & (runs.bucket == b)]
        if len(in_bucket) >= min_bucket_runs:
            time_of_day[int(b)] = median(in_bucket) - level
    weekend = 0.0
    if fitted_week:
        tod = np.array([time_of_day.get(b, 0.0) for b in range(4)])
        weekend = median(y[runs.weekend] - level - tod[runs.bucket[runs.weekend]])
    # The arms compare means of runs with these levels, so the levels are means too: under
    # noise skewed toward worse (a slow replica, congested runs) the median run is better than
    # the mean one, and every window's mean would read worse than a median baseline. Medians
    # first, then each level moved by its runs' mean residual, winsorized at WINSOR_MADS robust
    # scales so that one outage-slowed afternoon still barely moves it. (The overall level
    # moves only for the runs of buckets too sparse for a level of their own.)
    model = Baseline(
        level,
        time_of_day,
        weekend,
        {},
        0.0,
        0.0,
        len(runs),
        float(runs.t[-1]),
        tod_hour=hours,
        tod_reach=reach,
    )
    resid = y - model.expected(runs)
    bound = WINSOR_MADS * max(_mad_scale(resid), MIN_SCALE)
    clipped = np.clip(resid, -bound, bound)
    sparse = typical & ~np.isin(runs.bucket, list(time_of_day))
    moved = _mean(clipped[sparse]) if sparse.any() else 0.0
    by_bucket = np.full(4, moved)
    for b in time_of_day:
        by_bucket[b] = _mean(clipped[typical & on & (runs.bucket == b)])
    if fitted_week:
        weekend += _mean(clipped[runs.weekend] - by_bucket[runs.bucket[runs.weekend]])
    means = {b: v + by_bucket[b] - moved for b, v in time_of_day.items()}
    return replace(model, level=level + moved, time_of_day=means, weekend=weekend), bound


def _bucket_hours(
    runs: Runs, typical: np.ndarray
) -> tuple[dict[int, float], dict[int, float], np.ndarray]:
    """Each bucket's hour (the median hour of the day of its typical runs), how far from it
    its runs lie (REACH_MIN_H at least, or the spread of three in four of them and half an
    hour: an hourly schedule's bucket reaches all its hours), and which runs lie that close.
    A run further off (a confirmation run hours from the schedule's) does not set the bucket's
    level: it reads the daily curve at its own hour (Baseline.expected)."""
    hours: dict[int, float] = {}
    reach: dict[int, float] = {}
    on = np.ones(len(runs), bool)
    for b in np.unique(runs.bucket):
        mine = runs.bucket == b
        own = runs.hour[typical & mine]
        if not len(own):
            continue
        centre = median(own)
        off = np.abs(own - centre)
        spread = float(np.sort(off)[math.ceil(0.75 * (len(off) - 1))])
        hours[int(b)], reach[int(b)] = centre, max(REACH_MIN_H, spread + REACH_PAD_H)
        on[mine] = np.abs(runs.hour[mine] - centre) <= reach[int(b)]
    return hours, reach, on


def _scales(
    resid: np.ndarray, bucket: np.ndarray, *, levels: int
) -> tuple[dict[int, float], float, dict[int, int]]:
    """Each bucket's noise scale (shrunk toward the overall one), the overall scale, and each
    bucket's run count. Residuals from levels fitted on the same runs are closer to them than
    new runs will be: each bucket's fitted level costs about a run's worth of spread, which
    matters while the baseline is young (12 runs over three or four levels: a fifth of the
    variance)."""
    overall = max(_robust_sd(resid) * _unbias(len(resid), max(levels, 1)), MIN_SCALE)
    scale, counts = {}, {}
    for b in sorted(set(bucket.tolist())):
        r = resid[bucket == b]
        counts[int(b)] = len(r)
        own = _robust_sd(r) * _unbias(len(r), 1)
        scale[int(b)] = max(
            math.sqrt((len(r) * own**2 + SHRINK_RUNS * overall**2) / (len(r) + SHRINK_RUNS)),
            MIN_SCALE,
        )
    return scale, overall, counts


def _day_effects(
    resid: np.ndarray, day: np.ndarray, min_runs: int
) -> tuple[dict[int, float], dict[int, float]]:
    """Day-of-week effects on residuals that already have the weekend taken out, and the
    variance left in each estimate; none unless every day of the week has `min_runs` runs.

    Each day's mean residual is shrunk toward none by how much of the days' spread their own
    noise (the runs' scatter within days) explains: a weekly cycle is kept, days that differ
    by chance are mostly not (empirical Bayes, the positive part)."""
    counts = np.bincount(day, minlength=7)
    if counts.min() < min_runs:
        return {}, {}
    means = np.bincount(day, weights=resid, minlength=7) / counts
    within = np.bincount(day, weights=(resid - means[day]) ** 2, minlength=7).sum()
    noise = within / max(len(resid) - 7, 1) / counts  # of each day's mean
    between = float(np.mean(means**2 - noise))  # the real days' spread
    if between <= 0.0:
        return {}, {}
    keep = between / (between + noise)
    return (
        {d: float(means[d] * keep[d]) for d in range(7)},
        {d: float(noise[d] * keep[d]) for d in range(7)},
    )


def _skewness(x: np.ndarray) -> float:
    """The third standardized moment of x winsorized at ±WINSOR_MADS robust SDs around its
    median (as _robust_sd): a skewed noise counts, a single absurd run does not make it."""
    if len(x) < 3:
        return 0.0
    centre = median(x)
    mad = 1.4826 * median(np.abs(x - centre))
    if mad > 0:
        x = np.clip(x, centre - WINSOR_MADS * mad, centre + WINSOR_MADS * mad)
    d = x - _mean(x)
    variance = float(d @ d) / len(x)
    if variance <= MIN_SCALE**4:
        return 0.0
    return float((d * d) @ d) / len(x) / variance**1.5


def _unbias(n: int, fitted: int) -> float:
    """The factor that undoes the shrinkage of n residuals' spread by `fitted` levels."""
    return math.sqrt(n / (n - fitted)) if n > fitted + 1 else 1.0


def _robust_sd(x: np.ndarray) -> float:
    """Standard deviation after winsorizing at ±WINSOR_MADS robust SDs: heavy or skewed tails
    count (they are the series' real noise, and a mean of runs feels all of it), a single
    absurd run does not dominate."""
    if len(x) < 2:
        return 0.0
    centre = float(median(x))
    mad = 1.4826 * median(np.abs(x - centre))  # _mad_scale(x)
    if mad == 0:
        return _std(x)
    return _std(np.clip(x, centre - WINSOR_MADS * mad, centre + WINSOR_MADS * mad))


def _std(x: np.ndarray) -> float:
    """np.std(x), step by step as numpy takes it, without its cost per call."""
    d = x - _mean(x)
    return math.sqrt(float((d * d).sum()) / len(x))


def _mean(x: np.ndarray) -> float:
    """np.mean(x) of a non-empty array, as numpy takes it (its sum over its count)."""
    return float(x.sum()) / len(x)
