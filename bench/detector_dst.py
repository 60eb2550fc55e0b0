"""Daylight-saving bench (issue 28, bug 4): false alerts of a provider whose evening peak
follows a local day, with and without its demand time zone and the guard (docs/alerts.md,
"Local-time demand"), and what the guard costs a real one-slot slowdown, on another date and
days after a change.

A series pair (decode, TTFT), 3 runs a day at fixed UTC times from a random first time (as
a schedule without a time zone runs; with --local-schedule at fixed New York times, as one in
that zone runs), 5 samples a run, σ 0.15 per sample with 0.06 of it shared by a run's
samples; the provider's evening peak in `ZONE` local time, 18–22 h (decode −25 %, TTFT
+35 %, edges a quarter-hour soft), so it moves by an hour in UTC on the zone's two dates.
Spring series cross the US March change (and the EU one), autumn ones the EU October and US
November ones; 60 days, every run evaluated by the real detector and hysteresis.

    python bench/detector_dst.py [--pairs 40] [--seed 3] [--local-schedule]
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

import django  # noqa: E402

django.setup()

from detector_generators import Family, sample_noise  # noqa: E402

from alerts.config import detector_config  # noqa: E402
from alerts.detection.detector import SeriesInput, assess_together, judge  # noqa: E402
from alerts.detection.hysteresis import Streak, Transition, advance, counted_at  # noqa: E402
from alerts.detection.local_time import transitions, utc_offsets  # noqa: E402
from alerts.detection.rules import DECODE, TTFT, DetectorConfig  # noqa: E402
from alerts.detection.runs import Runs  # noqa: E402
from benchmarks.models import Schedule  # noqa: E402
from benchmarks.schedules import slots_between  # noqa: E402

ZONE = "America/New_York"
DAYS = 60
STARTS = {
    "spring": datetime(2026, 1, 20, tzinfo=UTC).timestamp(),
    "autumn": datetime(2026, 9, 20, tzinfo=UTC).timestamp(),
}
NOISE = Family("dst", shared="iid")
SIZES = {DECODE: 0.25, TTFT: 0.35}


def local_peak(t: np.ndarray, zone: str = ZONE, start: float = 18, end: float = 22):
    """1 inside the local evening peak, 0 outside, soft edges (a quarter of an hour)."""
    hour = ((t + utc_offsets(t, zone)) % 86_400.0) / 3600.0
    rise = 1 / (1 + np.exp(-(hour - start) / 0.25))
    fall = 1 / (1 + np.exp((hour - end) / 0.25))
    return rise * fall


PEAK_ZONE = [ZONE]  # --peak-zone UTC: the control, a peak that never moves
LOCAL_SCHEDULE = [False]  # --local-schedule: the runs at fixed ZONE times


def run_times(start: float, first: float) -> np.ndarray:
    """3 runs a day, 8 hours apart from `first` seconds into the day: in UTC, or with
    --local-schedule where a schedule of those times (to the minute) in ZONE puts them
    (benchmarks.schedules.slots_between)."""
    if not LOCAL_SCHEDULE[0]:
        return np.round(start + first + np.arange(DAYS * 3) * 8 * 3600.0)
    minute = int(first // 60)
    times = [f"{(minute // 60 + 8 * k) % 24:02d}:{minute % 60:02d}" for k in range(3)]
    schedule = Schedule(times_of_day=times, time_zone=ZONE)
    begin = datetime.fromtimestamp(start, UTC)
    slots = slots_between(schedule, begin, begin + timedelta(days=DAYS + 1))[: DAYS * 3]
    return np.array([slot.timestamp() for slot in slots])


def series_pair(rng, start: float, slot_step: tuple[float, int] | None = None):
    """Run times (Unix s) and per-sample values of decode and TTFT; slot_step = (time, UTC
    8-hour block): from then on that block's runs are also 25 % / 35 % worse."""
    t = run_times(start, rng.uniform(0, 8 * 3600))
    hours = (t - start) / 3600.0
    peak = local_peak(t, PEAK_ZONE[0])
    out = {}
    for metric, sign in ((DECODE, -1.0), (TTFT, 1.0)):
        size = SIZES[metric]
        worse = peak * np.log1p(size)
        if slot_step is not None:
            at, block = slot_step
            index = np.arange(len(t))
            worse = worse + np.log1p(size) * ((t >= at) & (index % 3 == block))
        level = np.log(rng.uniform(40, 800) if metric == DECODE else rng.uniform(150, 3000))
        log = level + sign * worse
        out[metric] = np.exp(log[:, None] + sample_noise(rng, NOISE, hours, sign))
    return t, out


def opens(t, values, config: DetectorConfig, *, zone: str | None, guard: bool) -> list[list]:
    """When alerts open in each series of the pair (decode, TTFT; Unix s), evaluated after
    each run from day 5 on; an open alert closes as evaluate.py closes it."""
    metrics = (DECODE, TTFT)
    hist = [
        Runs.from_samples(values[m].ravel(), np.repeat(t, values[m].shape[1]), zone)
        for m in metrics
    ]
    streaks, frozen, opened = [Streak(), Streak()], [None, None], [None, None]
    count: list[list] = [[], []]
    for now in t[15:]:
        items = [
            SeriesInput(h, config.rules[m], f, o, zone, guard, counted_at(k))
            for h, m, f, o, k in zip(hist, metrics, frozen, opened, streaks, strict=True)
        ]
        tests = assess_together(items, now=now, config=config)
        for k, judgement in enumerate(judge(tests, config)):
            streaks[k], transition = advance(
                streaks[k],
                judgement.verdict,
                config,
                recovered=judgement.recovered,
                fresh=judgement.fresh,
                new_normal=judgement.new_normal,
                at=float(now),
            )
            if transition == Transition.OPEN:
                count[k].append(now)
                frozen[k], opened[k] = tests[k].baseline, judgement.opened
            elif transition in (Transition.RESOLVE, Transition.NEW_NORMAL):
                frozen[k], opened[k] = None, None
    return count


CONDITIONS = {
    "no zone, no guard (before)": (None, False),
    "no zone, guard": (None, True),
    "zone and guard": (ZONE, True),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=40, help="pairs per season")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--peak-zone", default=ZONE, help="UTC: the control (no move)")
    parser.add_argument(
        "--local-schedule", action="store_true", help=f"the runs at fixed {ZONE} times"
    )
    args = parser.parse_args()
    PEAK_ZONE[0] = args.peak_zone
    LOCAL_SCHEDULE[0] = args.local_schedule
    config = detector_config()
    rng = np.random.default_rng(args.seed)
    nulls = [series_pair(rng, STARTS[s]) for s in STARTS for _ in range(args.pairs)]
    months = len(nulls) * (DAYS - 5) / 30.44
    print(f"{len(nulls)} pairs, {months:.1f} series-months per metric")
    print("| condition | false episodes / series-month, decode | TTFT |")
    print("|---|---|---|")
    for name, (zone, guard) in CONDITIONS.items():
        found = [opens(t, v, config, zone=zone, guard=guard) for t, v in nulls]
        total = [sum(len(f[k]) for f in found) for k in (0, 1)]
        rates = [f"{n / months:.3f} ({n})" for n in total]
        print(f"| {name} | {rates[0]} | {rates[1]} |")
    # A real slowdown of one UTC slot, as large as the peak, 12–20 days before any change
    # (spring: mid-February; autumn: early October): the share caught with the guard and
    # without (an alert opens on decode within a week of it).
    steps = []
    for season, start in STARTS.items():
        for _ in range(args.pairs):
            days = (25 if season == "spring" else 15) + rng.uniform(0, 4)
            at = start + days * 86_400.0
            steps.append((at, *series_pair(rng, start, (at, int(rng.integers(3))))))
    _caught("one-slot slowdown −25 % on a non-DST date", steps, config)
    # The guard's price: the same slowdown 2–4 days after New York's change (its third to
    # fifth run of the slot since), where a slot that changed with the clock is held.
    late = []
    for start in STARTS.values():
        [change] = transitions([ZONE], start, start + DAYS * 86_400.0)  # one in each season
        for _ in range(args.pairs):
            at = change + rng.uniform(2, 4) * 86_400.0
            late.append((at, *series_pair(rng, start, (at, int(rng.integers(3))))))
    _caught("the same 2–4 days after a daylight-saving change", late, config)


def _caught(title: str, steps: list, config: DetectorConfig) -> None:
    """The share of one-slot slowdowns (at, t, values) opened on decode within 7 days."""
    print(f"| {title} | caught within 7 days (decode) |")
    print("|---|---|")
    for name, (zone, guard) in CONDITIONS.items():
        caught = [
            any(at <= h <= at + 7 * 86_400 for h in opens(t, v, config, zone=zone, guard=guard)[0])
            for at, t, v in steps
        ]
        print(f"| {name} | {np.mean(caught):.1%} of {len(caught)} |")


if __name__ == "__main__":
    main()
