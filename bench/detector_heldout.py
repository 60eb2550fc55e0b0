"""Held-out series for bench/detector.py (issue 28): noise families the detector is never tuned
on. Tune on bench/detector_generators.py; report on these.

Every family is a pair, decode (tok/s) and TTFT (ms), measured by the same runs (3 a day from a
random first time, 5 samples each, 60 days), on a ±10 % daily sine unless said otherwise, with
log-normal sample noise of σ 0.15 in all. What each family adds:
- `independent`: nothing: every request's noise its own;
- `shared-6%`: σ 0.06 of it shared by the requests of one run (independent run to run);
- `drift φ0.8` / `drift φ0.95`: σ 0.06 of it a provider state that drifts in real time, an
  AR(1) (Ornstein–Uhlenbeck) process with correlation φ per 8 hours, whatever the schedule;
- `double-variance week`: one week, anywhere in the 60 days, with twice the variance;
- `t3`: Student t (3 degrees of freedom) sample noise of the same σ;
- `DST evening peak`: no sine; an evening peak of demand at 19:30 America/New_York (decode
  −20 %, TTFT +30 %, 1.5 h wide) across a daylight-saving date (November 1 2026 or March 14
  2027, day 27 of the series): in UTC the peak moves by one hour there. Only the series: the
  demand time zone is the detector's business.

Lasting small steps and a drift to −20 % over a week are bench/detector.py's scenarios, planted
in each family. `noise_model` tells bench/detector_oracle.py the model it may know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import numpy as np
from detector_generators import SAMPLES, Pair, Signal, log_change

SIGMA = 0.15
PART = 0.06  # σ of the run-shared or drifting part
EPOCH_S = 4 * 86_400.0  # as detector_generators: Monday 1970-01-05 00:00 UTC
# Mondays four weeks before a New York daylight-saving date (day 27 is its Sunday).
DST_EPOCHS = (1_791_158_400.0, 1_802_649_600.0)  # 2026-10-05 and 2027-02-15, 00:00 UTC
NEW_YORK = ZoneInfo("America/New_York")


@dataclass(frozen=True)
class Held:
    name: str
    shared: float = 0.0  # σ of noise shared by a run's requests, independent run to run
    drift: float = 0.0  # σ of the drifting provider state (stationary)
    phi: float = 0.0  # its correlation per 8 hours
    noise: str = "normal"  # normal | t3
    double_week: bool = False
    dst: bool = False
    runs_per_day: int = 3
    late: bool = False
    tune: bool = False  # never: these only report
    notes: str = field(default="", compare=False)


HELD = [
    Held("independent"),
    Held("shared-6%", shared=PART),
    Held("drift φ0.8", drift=PART, phi=0.8),
    Held("drift φ0.95", drift=PART, phi=0.95),
    Held("double-variance week", double_week=True),
    Held("t3", noise="t3"),
    Held("DST evening peak", dst=True),
]


def slots(rng: np.random.Generator, days: int, family: Held) -> np.ndarray:
    gap = 24 / family.runs_per_day
    first = rng.uniform(0, gap)
    return (np.arange(days)[:, None] * 24 + first + np.arange(family.runs_per_day) * gap).ravel()


def _local_hour(hours: np.ndarray, epoch_s: float) -> np.ndarray:
    """The New York local hour of day of each run."""
    offsets = [
        datetime.fromtimestamp(epoch_s + h * 3600, UTC).astimezone(NEW_YORK).utcoffset()
        for h in hours
    ]
    return (hours + np.array([o.total_seconds() for o in offsets]) / 3600) % 24


def _daily(rng, family: Held, hours, epoch_s: float, worse_sign: float, size: float):
    if not family.dst:
        return 0.10 * np.sin(2 * np.pi * (hours % 24) / 24 + rng.uniform(0, 2 * np.pi))
    local = _local_hour(hours, epoch_s)
    distance = np.minimum(np.abs(local - 19.5), 24 - np.abs(local - 19.5))
    return worse_sign * np.log1p(size) * np.exp(-0.5 * (distance / 1.5) ** 2)


def variance_factor(rng, family: Held, hours: np.ndarray) -> np.ndarray:
    """Each run's variance against the family's usual (2 in the doubled week)."""
    factor = np.ones(len(hours))
    if family.double_week:
        start = rng.uniform(0, max(hours[-1] - 7 * 24, 1.0))
        factor[(hours >= start) & (hours < start + 7 * 24)] = 2.0
    return factor


def drift_path(rng, sigma: float, phi: float, hours: np.ndarray) -> np.ndarray:
    """An Ornstein–Uhlenbeck state at the run times: correlation φ per 8 hours."""
    out = np.empty(len(hours))
    out[0] = rng.normal(0, sigma)
    decay = phi ** (np.diff(hours) / 8.0)
    steps = rng.normal(0, 1, len(hours)) * sigma * np.sqrt(1 - np.r_[0.0, decay] ** 2)
    for i in range(1, len(hours)):
        out[i] = decay[i - 1] * out[i - 1] + steps[i]
    return out


def sample_noise(rng, family: Held, hours: np.ndarray, worse_sign: float):
    """Per-sample log noise [run, sample] and each run's variance factor."""
    n = len(hours)
    factor = variance_factor(rng, family, hours)
    own = np.sqrt(SIGMA**2 - family.shared**2 - family.drift**2) * np.sqrt(factor)
    if family.noise == "t3":
        per_sample = rng.standard_t(3, (n, SAMPLES)) / np.sqrt(3) * own[:, None]
    else:
        per_sample = rng.normal(0, 1, (n, SAMPLES)) * own[:, None]
    if family.shared:
        per_sample += (rng.normal(0, family.shared, n) * np.sqrt(factor))[:, None]
    if family.drift:
        per_sample += drift_path(rng, family.drift, family.phi, hours)[:, None]
    return per_sample, factor


def make_pair(
    rng: np.random.Generator,
    family: Held,
    *,
    days: int,
    decode_signal: Signal | None = None,
    ttft_signal: Signal | None = None,
    truth: dict | None = None,
    hours: np.ndarray | None = None,
) -> Pair:
    hours = slots(rng, days, family) if hours is None else hours
    epoch_s = DST_EPOCHS[int(rng.integers(0, 2))] if family.dst else EPOCH_S
    out = {}
    for metric, worse_sign, base, signal, size in (
        ("decode", -1.0, rng.uniform(40, 800), decode_signal, 0.20),
        ("ttft", 1.0, np.exp(rng.uniform(*np.log((150.0, 3000.0)))), ttft_signal, 0.30),
    ):
        log_level = np.log(base) + _daily(rng, family, hours, epoch_s, worse_sign, size)
        if signal is not None:
            log_level = log_level + log_change(signal(hours), worse_sign)
        noise, _ = sample_noise(rng, family, hours, worse_sign)
        out[metric] = np.exp(log_level[:, None] + noise)
    return Pair(hours, out["decode"], out["ttft"], {**(truth or {}), "epoch_s": epoch_s})


def noise_model(family) -> tuple[float, float]:
    """What the oracle knows beyond the runs' variance: the drift's σ and its φ per 8 hours
    (bench/detector_generators' shared-AR1 family drifts with φ 0.8 per run, 8 hours)."""
    if isinstance(family, Held):
        return family.drift, family.phi
    if getattr(family, "shared", "none") == "ou":
        return family.ou
    return (PART, 0.8) if getattr(family, "shared", "none") == "ar1" else (0.0, 0.0)
