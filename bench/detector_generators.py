"""Synthetic series for bench/detector.py: families of noise (nulls) and the changes planted in
them. Half the families tune the detector's defaults, the other half only report (issue 9).

A series is a pair, decode (tok/s) and TTFT (ms), measured by the same runs: 3 slots a day from
a random first time, 5 samples per run, 60 days. What a family varies:
- the daily shape: a ±15 % sine, or a sharp evening peak (−25 % decode / +35 % TTFT around
  a random hour, 2 h wide);
- the week: a weekly sine or weekends faster, 0–10 %;
- the noise of a sample: log-normal σ = 0.15, Student t (3 d.o.f., heavy tails), 1 % of
  requests 3× slower, a σ that differs by slot (8 / 15 / 25 %);
- noise shared by the samples of a run (σ = 0.06 of the 0.15), independent or drifting
  (AR(1), φ = 0.8); and for tuning, a provider state drifting in real time (an
  Ornstein–Uhlenbeck process at the run times, σ 0.07 of the 0.15, φ 0.85 or 0.97 per 8 h);
- skewed noise: two backends behind one endpoint, 30 % of requests on one 40 % slower; or 5 %
  of runs meeting a congested provider, every request of the run 25 % worse (both held out,
  added after the defaults were chosen); and for tuning, one replica in seven 60 % slower, or
  8 % of runs throttled 18 % under weekly cycles and shared noise;
- runs that start up to 20 minutes late, 2 % of runs missing;
- the base level: decode 40–800 tok/s; TTFT 150 ms – 3 s (or 150–600 ms: fast endpoints).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

SLOTS_PER_DAY = 3
SAMPLES = 5
SIGMA = 0.15
SHARED = 0.06
EPOCH_S = 4 * 86_400.0  # hour 0 of every series: Monday 1970-01-05 00:00 UTC


@dataclass(frozen=True)
class Family:
    name: str
    shape: str = "sine"  # sine | peak
    week: str = "none"  # none | sine | weekend
    week_amp: tuple[float, float] = (0.0, 0.0)
    noise: str = "normal"  # normal | t3 | outliers | backends | bursts
    slot_noise: bool = False
    shared: str = "none"  # none | iid | ar1 | ou
    # The "ou" provider state: its σ and its correlation per 8 hours, in real time (an
    # Ornstein–Uhlenbeck process sampled at the run times, whatever the schedule)
    ou: tuple[float, float] = (0.0, 0.0)
    late: bool = False
    # Skewed noise: the share of requests on the slow backend and how much slower it is
    # (noise "backends"); the share of runs meeting a congested provider and how much worse
    # every request of such a run is (noise "bursts").
    slow: tuple[float, float] = (0.3, 1.4)
    burst: tuple[float, float] = (0.05, 1.25)
    ttft_range: tuple[float, float] = (150.0, 3000.0)
    tune: bool = True
    runs_per_day: int = SLOTS_PER_DAY  # evenly spaced (bench/detector.py --runs-per-day)
    notes: str = ""


FAMILIES = [
    # Tuning half.
    Family("sine·iid", tune=True, notes="±15 % sine, σ 0.15"),
    Family("sine·week·t3", week="sine", week_amp=(0.0, 0.10), noise="t3", tune=True),
    Family("sine·shared-iid", shared="iid", tune=True),
    Family("peak·slot-noise", shape="peak", slot_noise=True, tune=True),
    Family("sine·late-missing·outliers", late=True, noise="outliers", tune=True),
    # Held-out half: never looked at while tuning.
    Family(
        "peak·weekend10·outliers",
        shape="peak",
        week="weekend",
        week_amp=(0.10, 0.10),
        noise="outliers",
        tune=False,
    ),
    Family("sine·shared-AR1", shared="ar1", tune=False),
    Family(
        "peak·week0-10·t3·late",
        shape="peak",
        week="sine",
        week_amp=(0.0, 0.10),
        noise="t3",
        late=True,
        tune=False,
    ),
    Family("sine·slot-noise·shared-iid", slot_noise=True, shared="iid", tune=False),
    Family("fast-TTFT·sine·shared-iid", shared="iid", ttft_range=(150.0, 600.0), tune=False),
    # Held out and added after the defaults were chosen (last, so the draws of the families
    # above stay as they were): noise skewed toward worse.
    Family("sine·two-backends", noise="backends", tune=False),
    Family("sine·congested-runs", noise="bursts", tune=False),
    # Tuning families of skewed noise, added after those (last, for the same reason) with
    # other shapes and sizes than the held-out two: one replica in seven 60 % slower, and 8 %
    # of runs throttled 18 % under weekly cycles and shared noise.
    Family(
        "peak·slow-replica",
        shape="peak",
        noise="backends",
        slow=(0.15, 1.6),
        tune=True,
    ),
    Family(
        "sine·week·throttled-runs·shared-iid",
        week="sine",
        week_amp=(0.0, 0.10),
        noise="bursts",
        burst=(0.08, 1.18),
        shared="iid",
        tune=True,
    ),
    # Tuning families of drifting providers (added last, for the same reason): a provider
    # state that wanders in real time, with other spreads, speeds and shapes than the held-out
    # drift families (bench/detector_heldout.py: σ 0.06, φ 0.8 and 0.95 per 8 h).
    Family("peak·drift-ou σ7% φ0.85", shape="peak", shared="ou", ou=(0.07, 0.85), tune=True),
    Family(
        "sine·week·drift-ou σ7% φ0.97·late",
        week="sine",
        week_amp=(0.0, 0.05),
        shared="ou",
        ou=(0.07, 0.97),
        late=True,
        tune=True,
    ),
]


@dataclass
class Pair:
    """Slot times (h since start) and per-sample values [slot, sample] of decode and TTFT."""

    hours: np.ndarray
    decode: np.ndarray
    ttft: np.ndarray
    truth: dict = field(default_factory=dict)  # what was planted, for scoring


def slots(rng: np.random.Generator, days: int, family: Family) -> np.ndarray:
    """Run times (h since EPOCH_S): 3 a day (or the family's runs_per_day) from a random first
    time; late and missing runs for the families that have them."""
    late = family.late
    gap = 24 / family.runs_per_day
    first = rng.uniform(0, gap)
    hours = (np.arange(days)[:, None] * 24 + first + np.arange(family.runs_per_day) * gap).ravel()
    if late:
        hours = hours + rng.uniform(0, 20 / 60, len(hours))
        hours = hours[rng.uniform(size=len(hours)) >= 0.02]
    return hours


def _daily(rng, family: Family, hours: np.ndarray, worse_sign: float, size: float):
    """Log-scale daily pattern; worse_sign −1 for decode (slower = lower)."""
    tod = hours % 24
    if family.shape == "sine":
        return 0.15 * np.sin(2 * np.pi * tod / 24 + rng.uniform(0, 2 * np.pi))
    peak_at = rng.uniform(0, 24)
    distance = np.minimum(np.abs(tod - peak_at), 24 - np.abs(tod - peak_at))
    return worse_sign * size * np.exp(-0.5 * (distance / 1.0) ** 2)


def _weekly(rng, family: Family, hours: np.ndarray, worse_sign: float):
    amp = rng.uniform(*family.week_amp)
    if family.week == "sine":
        return amp * np.sin(2 * np.pi * hours / (24 * 7) + rng.uniform(0, 2 * np.pi))
    if family.week == "weekend":
        weekend = ((hours // 24) % 7) >= 5  # hour 0 is a Monday 00:00 UTC (see EPOCH)
        return -worse_sign * np.log1p(amp) * weekend  # weekends faster (better)
    return np.zeros_like(hours)


def sample_noise(rng, family: Family, hours: np.ndarray, worse_sign: float) -> np.ndarray:
    n = len(hours)
    sigma = np.full(n, SIGMA)
    if family.slot_noise:
        per_slot = rng.permutation([0.08, 0.15, 0.25])
        sigma = per_slot[((hours % 24) // 8).astype(int)]
    part = family.ou[0] if family.shared == "ou" else SHARED if family.shared != "none" else 0.0
    own = np.sqrt(np.maximum(sigma**2 - part**2, 0))
    if family.noise == "t3":
        # t(3) has variance 3: scaled to the same σ.
        per_sample = rng.standard_t(3, (n, SAMPLES)) / np.sqrt(3) * own[:, None]
    else:
        per_sample = rng.normal(0, 1, (n, SAMPLES)) * own[:, None]
    if family.noise == "outliers":
        per_sample += worse_sign * np.log(3) * (rng.uniform(size=(n, SAMPLES)) < 0.01)
    if family.noise == "backends":
        # Half the spread within a backend; 30 % of requests reach one 40 % slower.
        share, factor = family.slow
        slow = rng.uniform(size=(n, SAMPLES)) < share
        per_sample = per_sample / 2 + worse_sign * np.log(factor) * slow
    if family.noise == "bursts":
        share, factor = family.burst
        per_sample += worse_sign * np.log(factor) * (rng.uniform(size=n) < share)[:, None]
    if family.shared == "iid":
        per_sample += rng.normal(0, SHARED, n)[:, None]
    elif family.shared == "ar1":
        phi, shared = 0.8, np.empty(n)
        shared[0] = rng.normal(0, SHARED)
        for i in range(1, n):
            shared[i] = phi * shared[i - 1] + rng.normal(0, SHARED * np.sqrt(1 - phi**2))
        per_sample += shared[:, None]
    elif family.shared == "ou":
        per_sample += _ou(rng, *family.ou, hours)[:, None]
    return per_sample


def _ou(rng, sigma: float, phi: float, hours: np.ndarray) -> np.ndarray:
    """An Ornstein–Uhlenbeck state at the run times: spread σ, correlation φ per 8 hours."""
    out = np.empty(len(hours))
    out[0] = rng.normal(0, sigma)
    decay = phi ** (np.diff(hours) / 8.0)
    steps = rng.normal(0, 1, len(hours)) * sigma * np.sqrt(1 - np.r_[0.0, decay] ** 2)
    for i in range(1, len(hours)):
        out[i] = decay[i - 1] * out[i - 1] + steps[i]
    return out


Signal = Callable[[np.ndarray], np.ndarray]  # hours → worse-oriented fractional change


def log_change(change, worse_sign: float):
    """A worse-oriented fractional change on the log scale of the metric: 0.10 is −log(0.9)
    lower for decode (worse_sign −1), log(1.1) higher for TTFT."""
    return np.log1p(-change) if worse_sign < 0 else np.log1p(change)


def make_pair(
    rng: np.random.Generator,
    family: Family,
    *,
    days: int,
    decode_signal: Signal | None = None,
    ttft_signal: Signal | None = None,
    truth: dict | None = None,
    hours: np.ndarray | None = None,
) -> Pair:
    hours = slots(rng, days, family) if hours is None else hours
    out = {}
    for metric, worse_sign, base, signal in (
        ("decode", -1.0, rng.uniform(40, 800), decode_signal),
        ("ttft", 1.0, np.exp(rng.uniform(*np.log(family.ttft_range))), ttft_signal),
    ):
        size = 0.25 if metric == "decode" else 0.35
        log_level = (
            np.log(base)
            + _daily(rng, family, hours, worse_sign, np.log1p(size))
            + _weekly(rng, family, hours, worse_sign)
        )
        if signal is not None:
            change = signal(hours)  # worse-oriented fraction: 0.25 = 25 % slower / higher
            log_level = log_level + log_change(change, worse_sign)
        values = np.exp(log_level[:, None] + sample_noise(rng, family, hours, worse_sign))
        out[metric] = values
    return Pair(hours, out["decode"], out["ttft"], truth or {})
