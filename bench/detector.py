"""Regression detector bench: false alerts, recall and delay on synthetic series (issue 5).

Generates N series × D days of decode speeds with a ±15 % daily cycle and 15 % noise (log-normal,
σ = 0.15), 3 slots a day × 5 samples, plants 10 % and 25 % slowdowns in some series, and runs the
real detector (alerts.detector.test_series / judge and alerts.hysteresis.advance, with the
thresholds from settings) after every slot, as evaluate.py does live. Series are evaluated in
pairs, as a run's two series (decode, TTFT) are, so Benjamini–Hochberg sees the same family size.

    python bench/detector.py [--series 400] [--days 60] [--seed 1] [--noise 0.15]

Targets: ≤ 0.05 false alert episodes per series-month; ≥ 95 % of 25 % steps within 36 h;
≥ 80 % of 10 % steps within 72 h. No database is used.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

import django  # noqa: E402

django.setup()

from alerts.detector import Window, judge, test_series  # noqa: E402
from alerts.hysteresis import Streak, Transition, advance  # noqa: E402
from alerts.rules import DECODE, DetectorConfig  # noqa: E402
from benchmarks.buckets import BUCKET_HOURS  # noqa: E402

SLOTS_PER_DAY = 3
SAMPLES_PER_SLOT = 5
STEP_SIZES = (0.10, 0.25)
DEADLINE_H = {0.10: 72.0, 0.25: 36.0}


@dataclass
class Series:
    hours: np.ndarray  # slot times (h since start)
    values: np.ndarray  # [slot, sample] decode tok/s
    step_at: float | None  # hour of the planted step
    step: float

    def __post_init__(self) -> None:
        # Flat per-sample arrays, so a window is three slices.
        self.flat_values = self.values.ravel()
        self.flat_hours = np.repeat(self.hours, SAMPLES_PER_SLOT)
        self.flat_buckets = (self.flat_hours % 24 // BUCKET_HOURS).astype(int)


def slot_hours(rng: np.random.Generator, days: int) -> np.ndarray:
    """Slots evenly spread over the day from a random first time, like the default schedule."""
    first = rng.uniform(0, 24 / SLOTS_PER_DAY)
    offsets = np.arange(SLOTS_PER_DAY) * 24 / SLOTS_PER_DAY
    return (np.arange(days)[:, None] * 24 + first + offsets).ravel()


def make_series(rng: np.random.Generator, hours: np.ndarray, noise: float, step: float) -> Series:
    days = int(hours[-1] // 24) + 1
    base = rng.uniform(40, 800)
    phase = rng.uniform(0, 2 * np.pi)
    cycle = 1 + 0.15 * np.sin(2 * np.pi * (hours % 24) / 24 + phase)
    step_at = rng.uniform(21 * 24, (days - 10) * 24) if step else None
    level = np.where(step_at is not None and hours >= (step_at or 0), 1 - step, 1.0)
    shape = (len(hours), SAMPLES_PER_SLOT)
    values = base * (cycle * level)[:, None] * np.exp(rng.normal(0, noise, shape))
    return Series(hours, values, step_at, step)


def window(series: Series, start: int, stop: int) -> Window:
    """Samples of slots [start, stop), as evaluate.py loads them from the database."""
    cut = slice(start * SAMPLES_PER_SLOT, stop * SAMPLES_PER_SLOT)
    return Window.of(series.flat_values[cut], series.flat_buckets[cut], series.flat_hours[cut])


@dataclass
class Outcome:
    false_episodes: int = 0
    watched_h: float = 0.0  # evaluated time without a planted step in effect
    detected_h: float | None = None  # delay of the first alert after the step


def simulate(pair: list[Series], config: DetectorConfig) -> list[Outcome]:
    """Evaluate both series after each slot, as if live."""
    rule = config.rules[DECODE]
    recent_h, baseline_h = config.recent_hours, config.baseline_days * 24
    streaks = [Streak() for _ in pair]
    outcomes = [Outcome() for _ in pair]
    hours = pair[0].hours  # a pair shares its slots (one run measures both)
    previous = None
    for i, now in enumerate(hours):
        r0 = np.searchsorted(hours, now - recent_h, side="right")
        b0 = np.searchsorted(hours, now - recent_h - baseline_h, side="right")
        tests = [test_series(window(s, b0, r0), window(s, r0, i + 1), rule, config) for s in pair]
        for k, (series, judgement) in enumerate(zip(pair, judge(tests, config), strict=True)):
            streaks[k], transition = advance(streaks[k], judgement.verdict, config)
            outcome = outcomes[k]
            stepped = series.step_at is not None and now >= series.step_at
            if tests[k].enough and not stepped and previous is not None:
                outcome.watched_h += now - previous
            if transition != Transition.OPEN:
                continue
            if not stepped:
                outcome.false_episodes += 1
            elif outcome.detected_h is None:
                outcome.detected_h = now - series.step_at
        previous = now
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--series", type=int, default=400)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--noise", type=float, default=0.15, help="σ of the log-normal noise")
    parser.add_argument("--stepped", type=float, default=0.25, help="share of series per step size")
    args = parser.parse_args()
    # Steps are planted between day 21 (a full baseline before them) and 10 days before the end.
    if args.series < 2 or args.series % 2 or args.days < 31:
        parser.error("give an even --series ≥ 2 and --days ≥ 31")
    config = DetectorConfig.from_settings()
    rng = np.random.default_rng(args.seed)
    per_size = round(args.series * args.stepped)
    steps = [0.10] * per_size + [0.25] * per_size
    steps += [0.0] * (args.series - len(steps))
    rng.shuffle(steps)

    started = time.perf_counter()
    results: list[tuple[Series, Outcome]] = []
    for k in range(0, args.series, 2):
        hours = slot_hours(rng, args.days)  # a pair shares its slots: evaluated together
        first = make_series(rng, hours, args.noise, steps[k])
        second = make_series(rng, hours, args.noise, steps[k + 1])
        for series, outcome in zip((first, second), simulate([first, second], config), strict=True):
            results.append((series, outcome))
    elapsed = time.perf_counter() - started

    false = sum(o.false_episodes for _, o in results)
    months = sum(o.watched_h for _, o in results) / (30 * 24)
    print(
        f"detector bench: {args.series} series × {args.days} days, noise σ={args.noise}, "
        f"±15 % daily cycle, {SLOTS_PER_DAY} slots/day × {SAMPLES_PER_SLOT} samples"
    )
    print(
        f"config: p<{config.p_value}, BH q<{config.fdr_q}, HL {config.ci_level:.0%} interval, "
        f"decode ≥{config.rules[DECODE].min_effect:.0%}, open after {config.open_after}, "
        f"resolve after {config.resolve_after}"
    )
    print(
        f"false alert episodes: {false} in {months:.1f} series-months = "
        f"{false / months:.3f} per series-month (target ≤ 0.05)"
    )
    for size in STEP_SIZES:
        delays = [o.detected_h for s, o in results if s.step == size]
        caught = [d for d in delays if d is not None]
        within = sum(d <= DEADLINE_H[size] for d in caught)
        median = f"{np.median(caught):.0f} h" if caught else "n/a"
        target = 95 if size == 0.25 else 80
        print(
            f"{size:.0%} steps: {len(delays)}; caught within {DEADLINE_H[size]:.0f} h: "
            f"{within / len(delays):.1%} (target ≥ {target} %); caught at all: "
            f"{len(caught) / len(delays):.1%}; median delay {median}"
        )
    evaluations = sum(len(s.hours) for s, _ in results)
    print(
        f"run time: {elapsed:.1f} s ({evaluations} evaluations, "
        f"{elapsed / evaluations * 1e3:.2f} ms each)"
    )


if __name__ == "__main__":
    main()
