"""Regression detector bench (issues 5, 9 and 28): false alerts, detection, delays, resolves, time.

Runs the real detector (alerts.detection: detector.assess_together / judge, hysteresis.advance, the
thresholds from settings, the frozen baseline of an open alert) after every run of synthetic
series pairs (decode and TTFT, evaluated together as one run's series are) from the families in
bench/detector_generators.py (tune on these) or, with --held, issue 28's held-out families in
bench/detector_heldout.py (report on these, never tune). Prints one table with every target of
issue 9, then per family each row's figure beside the likelihood-ratio oracle's
(bench/detector_oracle.py, which knows the noise model and the step), the same test's when it
learns each series' noise from its first 28 days as the detector must, and the ratios, and the
elapsed time. With DATABASE_URL set it also times a whole evaluation after a run
(bench/evaluation_time.py, a throwaway test database). With --peers K each series' provider
has K other endpoints (null pairs of its family on its schedule), whose noise readings the
detector pools with the series' own, as evaluate.py pools a provider's stored readings.

    python bench/detector.py [--pairs 30] [--days 60] [--seed 1] [--half both|tune|held]
                             [--set p_value=0.001 ...] [--family NAME]
                             [--scenario null,step-big,...] [--runs-per-day 24]
                             [--held] [--oracle-series 200] [--confirm] [--peers 3]
                             [--confirm-off]

--confirm draws every series on a denser grid of candidate times, so the same seed gives other
series than without it; --confirm-off simulates those same series on the plain schedule, the
pair of figures that tells what confirmation runs add.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

import django  # noqa: E402

django.setup()

import detector_generators as generators  # noqa: E402
import detector_heldout as heldout  # noqa: E402
from detector_generators import EPOCH_S, FAMILIES, Family, Pair  # noqa: E402
from detector_oracle import ROWS as ORACLE_ROWS  # noqa: E402
from detector_oracle import learned_oracle, lr_oracle  # noqa: E402

from alerts.config import detector_config  # noqa: E402
from alerts.detection.detector import (  # noqa: E402
    SeriesInput,
    assess_together,
    judge,
    noise_lags,
)
from alerts.detection.hysteresis import Streak, Transition, advance, counted_at  # noqa: E402
from alerts.detection.rules import DECODE, TTFT, DetectorConfig  # noqa: E402
from alerts.detection.runs import Runs  # noqa: E402

METRICS = (DECODE, TTFT)
# An alert that opens this long after a step is no catch of it: the default baseline (28 days
# before the last 72 h) then holds only runs after the step, and the step is its level
_DEFAULTS = DetectorConfig()
STEP_CAUGHT_H = _DEFAULTS.baseline_days * 24 + _DEFAULTS.long_hours
STEP_DAYS = (21.0, 30.0)  # the days into a series its changes are planted between


@dataclass
class Track:
    """What happened to one series of a pair: transitions as (hour, kind)."""

    events: list[tuple[float, str]] = field(default_factory=list)
    watched_h: float = 0.0  # evaluated time with enough data


@dataclass
class Timer:
    seconds: float = 0.0
    calls: int = 0


def peer_histories(pair: Pair) -> list[Runs]:
    """A peer pair's decode and TTFT series, its scheduled runs only (as a provider's other
    endpoint would have them)."""
    seconds = np.round(pair.hours * 3600) + pair.truth.get("epoch_s", EPOCH_S)
    scheduled = pair.truth.get("scheduled", np.ones(len(seconds), bool))
    return [
        Runs.from_samples(values[scheduled].ravel(), np.repeat(seconds[scheduled], values.shape[1]))
        for values in (pair.decode, pair.ttft)
    ]


def peer_lags(peers: list[Runs], now: float, config: DetectorConfig) -> list:
    """What the provider's other series (`peers`) read of their noise's correlation at `now`
    (detector.noise_lags), for assess_together to pool."""
    found = (noise_lags(h.between(-np.inf, now), now=now, config=config) for h in peers)
    return [x for x in found if x is not None]


def simulate(
    pair: Pair,
    config: DetectorConfig,
    *,
    start_h: float,
    end_h: float,
    timer: Timer,
    peers: list[Runs] = (),
):
    """Evaluate both series after each run in [start_h, end_h], as evaluate.py does live;
    `peers`: the provider's other series (peer_histories), whose noise readings are pooled
    with the pair's own."""
    # Whole seconds, as the database's run slots are: a run exactly 24 h before `now` is then
    # outside the last day's window every time, not by the whim of floating-point rounding.
    seconds = np.round(pair.hours * 3600) + pair.truth.get("epoch_s", EPOCH_S)
    histories = [
        Runs.from_samples(values.ravel(), np.repeat(seconds, values.shape[1]))
        for values in (pair.decode, pair.ttft)
    ]
    streaks = [Streak(), Streak()]
    frozen = [None, None]
    opened = [None, None]
    segment = [-np.inf, -np.inf]  # where a new normal started each series' history again
    tracks = [Track(), Track()]
    previous = None
    for hour, now in zip(pair.hours, seconds, strict=True):
        if not start_h <= hour <= end_h:
            continue
        lags = peer_lags(peers, now, config) if peers else ()  # stored readings, live
        began = time.perf_counter()
        items = [
            SeriesInput(h.between(s, np.inf), config.rules[m], f, o, counted_at=counted_at(k))
            for h, m, f, o, s, k in zip(
                histories, METRICS, frozen, opened, segment, streaks, strict=True
            )
        ]
        tests = assess_together(items, now=now, config=config, peers=lags)
        judgements = judge(tests, config)
        timer.seconds += time.perf_counter() - began
        timer.calls += len(tests)
        for k, judgement in enumerate(judgements):
            streaks[k], transition = advance(
                streaks[k],
                judgement.verdict,
                config,
                recovered=judgement.recovered,
                fresh=judgement.fresh,
                new_normal=judgement.new_normal,
                at=float(now),
            )
            if tests[k].enough and previous is not None:
                tracks[k].watched_h += hour - previous
            if transition == Transition.OPEN:
                frozen[k] = tests[k].baseline
                opened[k] = judgement.opened
                tracks[k].events.append((hour, "open"))
            elif transition == Transition.RESOLVE:
                frozen[k], opened[k] = None, None
                tracks[k].events.append((hour, "resolve"))
            elif transition == Transition.NEW_NORMAL:
                # As evaluate.py's Segment: the history starts again where the alert opened.
                segment[k] = opened[k].at - 1.0
                frozen[k], opened[k] = None, None
                tracks[k].events.append((hour, "new_normal"))
        previous = hour
    return tracks


def _peer_pair(rng, family, *, days: int, hours: np.ndarray) -> Pair:
    """One of the provider's other endpoints: a null pair of the family on `hours`."""
    gen = heldout if isinstance(family, heldout.Held) else generators
    return gen.make_pair(rng, family, days=days, hours=hours)


def _scheduled(pair: Pair) -> np.ndarray:
    """The pair's scheduled run hours (with --confirm, pair.hours holds candidates too)."""
    return pair.hours[pair.truth["scheduled"]] if "scheduled" in pair.truth else pair.hours


def _step(at: float, size: float):
    return lambda h: np.where(h >= at, size, 0.0)


def scenarios(rng: np.random.Generator, family: Family, *, days: int, step_days=STEP_DAYS):
    """(scenario, pair, start_h, end_h) for every planted change, each at a random time
    `step_days` (from, to) into the series: by default after a full baseline."""
    gen = heldout if isinstance(family, heldout.Held) else generators
    make_pair, slots = gen.make_pair, gen.slots
    at = rng.uniform(step_days[0] * 24, step_days[1] * 24)
    yield "null", make_pair(rng, family, days=days), 0.0, days * 24.0
    big = make_pair(
        rng,
        family,
        days=days,
        decode_signal=_step(at, 0.25),
        ttft_signal=_step(at, 0.30),
        truth={"at": at},
    )
    yield "step-big", big, at - 24, days * 24.0  # to the end: does it stay open?
    small = make_pair(
        rng,
        family,
        days=days,
        decode_signal=_step(at, 0.10),
        ttft_signal=_step(at, 0.15),
        truth={"at": at},
    )
    yield "step-small", small, at - 24, days * 24.0  # to the end: does it stay open?
    back = at + 5 * 24  # the same small step, over after five days: does "back to normal" come?
    passing = make_pair(
        rng,
        family,
        days=days,
        decode_signal=lambda h: np.where((h >= at) & (h < back), 0.10, 0.0),
        ttft_signal=lambda h: np.where((h >= at) & (h < back), 0.15, 0.0),
        truth={"at": at, "end": back},
    )
    yield "step-over", passing, at - 24, back + 7 * 24
    block = int(rng.integers(0, 3))  # the 8-hour block of one of the day's three runs
    slot = make_pair(
        rng,
        family,
        days=days,
        truth={"at": at},
        decode_signal=lambda h: np.where((h >= at) & ((h % 24) // 8 == block), 0.30, 0.0),
    )
    yield "slot", slot, at - 24, days * 24.0  # to the end: does it stay open?
    drift = make_pair(
        rng,
        family,
        days=days,
        truth={"at": at},
        decode_signal=lambda h: np.clip((h - at) / (7 * 24), 0, 1) * 0.20,
    )
    yield "drift", drift, at - 24, at + 10 * 24
    hours = slots(rng, days, family)
    covered = hours[(hours > at)][0]  # the dip covers this run
    dip_start = covered - rng.uniform(0, 6)
    dip = make_pair(
        rng,
        family,
        days=days,
        truth={"at": dip_start, "end": dip_start + 6},
        decode_signal=lambda h: np.where((h >= dip_start) & (h < dip_start + 6), 0.40, 0.0),
        hours=hours,
    )
    yield "dip", dip, dip_start - 24, dip_start + 5 * 24


def _first(events, kind, after=-np.inf):
    return next((h for h, k in events if k == kind and h >= after), None)


def _ending(events, opened: float) -> str | None:
    """How the alert opened at `opened` ended ("resolve", "new_normal"; None: still open)."""
    return next((k for h, k in events if h > opened and k != "open"), None)


def score(results, *, deadline: dict) -> dict:
    """Figures per (half, row) from [(family, scenario, pair, tracks)]."""
    acc: dict = defaultdict(lambda: defaultdict(list))
    for family, scenario, pair, tracks in results:
        for half in ("tune" if family.tune else "held", family.name):
            _score_one(acc[half], family, scenario, pair, tracks)
    return acc


def _score_one(acc, family, scenario, pair, tracks) -> None:
    """Add one pair's figures to acc (one half's, or one family's)."""
    at = pair.truth.get("at")
    for metric, track in zip(METRICS, tracks, strict=True):
        opens = [h for h, k in track.events if k == "open"]
        if scenario == "null":
            acc[f"fa {metric} {family.name}"].append((len(opens), track.watched_h))
            acc["null-open-days"].extend(_open_days(track.events, pair.hours[-1]))
            continue
        signalled = scenario in ("step-big", "step-small", "step-over") or metric == DECODE
        if not signalled:
            continue
        first = _first(track.events, "open", at)
        delay = None if first is None else first - at
        if scenario in ("step-big", "step-small"):
            acc[f"{scenario} {metric}"].append(delay)
        caught = first is not None and delay <= STEP_CAUGHT_H
        if scenario in ("step-big", "step-small", "slot") and caught:
            ended = _ending(track.events, first)
            acc[f"persist-resolve {scenario}"].append(ended == "resolve")
            if ended == "new_normal":  # re-armed against the step's level: any alert after
                acc[f"after-new-normal {scenario}"].append(  # it is a false alert there
                    sum(h > first and k == "open" for h, k in track.events)
                )
        if scenario == "step-over" and first is not None and first < pair.truth["end"]:
            resolved = _first(track.events, "resolve", pair.truth["end"])
            acc["over-resolve"].append(None if resolved is None else resolved - pair.truth["end"])
        if scenario == "slot":
            acc["slot"].append(delay)
        if scenario == "drift":
            level = None if delay is None else min(delay / (7 * 24), 1) * 0.20
            acc["drift"].append(level)
        if scenario == "dip":
            end = pair.truth["end"]
            in_dip = [h for h in opens if h >= at]
            resolved = _first(track.events, "resolve", at)
            acc["dip-opens"].append(len(in_dip))
            if in_dip:
                acc["dip-resolve"].append(None if resolved is None else resolved - end)


def _open_days(events, end_h: float) -> list[float]:
    """How long each alert stayed open, in days (to the end of the series if still open)."""
    spans, opened = [], None
    for hour, kind in events:
        if kind == "open":
            opened = hour
        elif opened is not None:
            spans.append((hour - opened) / 24)
            opened = None
    if opened is not None:
        spans.append((end_h - opened) / 24)
    return spans


def _rate(items):
    episodes = sum(e for e, _ in items)
    months = sum(w for _, w in items) / (30 * 24)
    return episodes / months if months else float("nan"), episodes, months


def _within(delays, limit):
    if not delays:
        return "n/a"
    hit = sum(d is not None and d <= limit for d in delays)
    caught = [d for d in delays if d is not None]
    median = f"{np.median(caught):.0f} h" if caught else "–"
    return f"{hit / len(delays):.0%} (median {median}, n={len(delays)})"


def _false_alert_rows(acc, families) -> list[tuple[str, str, str, str]]:
    rows = []
    for metric, label in ((DECODE, "decode"), (TTFT, "TTFT")):
        for fam in families:
            half = "tune" if fam.tune else "held"
            rate, episodes, months = _rate(acc[half][f"fa {metric} {fam.name}"])
            cell = f"{rate:.3f} ({episodes} in {months:.0f} s-mo)"
            rows.append(
                (
                    f"false alerts/series-month, {label}, {fam.name}",
                    "≤ 0.05",
                    cell if not fam.tune else "",
                    cell if fam.tune else "",
                )
            )
    return rows


def _persist(a, scenario) -> str:
    """How often the alert that caught a lasting step resolved before the step ended, and how
    many alerts opened after such alerts closed as the new normal."""
    xs, again = a[f"persist-resolve {scenario}"], a[f"after-new-normal {scenario}"]
    if not xs:
        return "n/a"
    return (
        f"{np.mean(xs):.0%} ({sum(xs)} of {len(xs)}); {len(again)} closed as the new "
        f"normal, {sum(again)} alerts after that"
    )


def table(acc, families, *, timings: dict) -> list[tuple[str, str, str, str]]:
    rows = _false_alert_rows(acc, families)

    def both(fn):
        return fn(acc["held"]), fn(acc["tune"])

    for key, target, limit in (
        (f"step-big {DECODE}", "≥ 95 % within 36 h", 36),
        (f"step-big {TTFT}", "≥ 95 % within 36 h", 36),
        (f"step-small {DECODE}", "≥ 80 % within 72 h", 72),
        (f"step-small {TTFT}", "≥ 80 % within 72 h", 72),
        ("slot", "≥ 80 % within 72 h", 72),
    ):
        name = {
            f"step-big {DECODE}": "−25 % decode step",
            f"step-big {TTFT}": "+30 % TTFT step",
            f"step-small {DECODE}": "−10 % decode step",
            f"step-small {TTFT}": "+15 % TTFT step",
            "slot": "−30 % decode in one slot only",
        }[key]
        rows.append((name, target, *both(lambda a, k=key, lim=limit: _within(a[k], lim))))

    def drift(a):
        levels = a["drift"]
        if not levels:
            return "n/a"
        before = sum(lv is not None and lv < 0.12 for lv in levels) / len(levels)
        caught = [lv for lv in levels if lv is not None]
        med = f"−{np.median(caught):.1%}" if caught else "–"
        return f"{before:.0%} before −12 % (median level {med}, n={len(levels)})"

    rows.append(("drift to −20 % over 7 days", "caught before −12 %", *both(drift)))

    for scenario, label in (
        ("step-big", "−25 %/+30 % steps"),
        ("step-small", "−10 %/+15 % steps"),
        ("slot", "−30 % one-slot slowdowns"),
    ):
        rows.append(
            (
                f"lasting {label} resolved before recovery",
                "0 %",
                *both(lambda a, s=scenario: _persist(a, s)),
            )
        )

    def over(a):
        return _within(a["over-resolve"], 72)

    rows.append(("lasting −10 %/+15 % steps over after 5 days: resolved", "", *both(over)))

    def dip(a):
        opens, res = a["dip-opens"], a["dip-resolve"]
        if not opens:
            return "n/a"
        late = sum(r is None or r > 24 for r in res)
        return (
            f"{sum(o <= 1 for o in opens) / len(opens):.0%} ≤ 1 alert; alerted {len(res)}, "
            f"of which {late} not resolved within 24 h of recovery"
        )

    rows.append(("6-hour −40 % decode dip", "≤ 1 alert, resolved ≤ 24 h", *both(dip)))

    def long_open(a):
        days = a["null-open-days"]
        if not days:
            return "n/a (no alerts)"
        return f"{sum(d > 14 for d in days)} of {len(days)} (longest {max(days):.1f} days)"

    rows.append(("false alerts open > 14 days", "none", *both(long_open)))
    rows.append(("detector time per series evaluation", "≤ 2 ms", timings["detector"], ""))
    rows.append(("whole evaluation after a run (PostgreSQL)", "≤ 50 ms", timings["whole"], ""))
    return rows


ORACLE_KEYS = (  # the oracle's rows (detector_oracle.ROWS) and the detector's figures for them
    (f"step-big {DECODE}", 36.0),
    (f"step-big {TTFT}", 36.0),
    (f"step-small {DECODE}", 72.0),
    (f"step-small {TTFT}", 72.0),
    ("drift", None),
)


def _share(acc, key: str, limit: float | None) -> float | None:
    """The detector's share for one oracle row: caught within the limit (the drift: before
    −12 %)."""
    xs = acc[key]
    if not xs:
        return None
    if limit is None:
        return sum(x is not None and x < 0.12 for x in xs) / len(xs)
    return sum(x is not None and x <= limit for x in xs) / len(xs)


def oracle_rows(acc, families, oracles: dict) -> list[tuple[str, ...]]:
    """Per family: each row's detector figure beside the likelihood-ratio oracle's and the one
    that learns the noise (`oracles`: family → (known, learned) figures), with the ratios; the
    false alert rates; lasting small steps resolved before they end."""
    rows = []
    for fam in families:
        mine = acc[fam.name]
        known, learned = oracles.get(fam.name, ({}, {}))
        for (key, limit), (label, *_) in zip(ORACLE_KEYS, ORACLE_ROWS, strict=True):
            det = _share(mine, key, limit)
            cells = [f"{det:.0%}" if det is not None else "–"]
            for best in (known.get(label), learned.get(label)):
                ratio = f"{det / best:.2f}" if det is not None and best else "–"
                cells += [f"{best:.0%}" if best is not None else "–", ratio]
            rows.append((fam.name, label, *cells))
        for metric, label in ((DECODE, "decode"), (TTFT, "TTFT")):
            rate, episodes, months = _rate(mine[f"fa {metric} {fam.name}"])
            cell = f"{rate:.3f} ({episodes} in {months:.0f} s-mo)"
            name = f"false alerts/series-month, {label} [≤ 0.05]"
            rows.append((fam.name, name, cell, "0.05", "", "0.05", ""))
        xs = mine["persist-resolve step-small"]
        cell = f"{np.mean(xs):.0%} ({sum(xs)} of {len(xs)})" if xs else "n/a"
        name = "lasting −10 %/+15 % steps resolved before end [≤ 1 %]"
        rows.append((fam.name, name, cell, "", "", "", ""))
    return rows


def _print_table(header, rows) -> None:
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=30, help="series pairs per family/scenario")
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--half", choices=("both", "tune", "held"), default="both")
    parser.add_argument("--set", nargs="*", default=[], help="override a DetectorConfig field")
    parser.add_argument("--no-db", action="store_true", help="skip the whole-evaluation timing")
    parser.add_argument("--family", help="only families whose name contains this")
    parser.add_argument(
        "--scenario", help="only these scenarios, comma-separated (null,step-big,…)"
    )
    parser.add_argument("--held", action="store_true", help="issue 28's held-out families")
    parser.add_argument(
        "--oracle-series", type=int, default=200, help="series a family for the LR oracle (0: none)"
    )
    parser.add_argument(
        "--runs-per-day", type=int, default=3, help="the schedule's runs a day (3: every 8 h)"
    )
    parser.add_argument("--confirm", action="store_true", help="with confirmation runs")
    parser.add_argument(
        "--confirm-off",
        action="store_true",
        help="the plain schedule on --confirm's draws (its denser grid, no confirmation run "
        "asked): the same series with and without confirmation runs",
    )
    parser.add_argument(
        "--peers",
        type=int,
        default=0,
        help="the provider's other endpoints: pairs of the same family on the same schedule "
        "whose noise each series pools with its own",
    )
    parser.add_argument(
        "--step-days",
        type=lambda text: tuple(float(x) for x in text.split(",")),
        default=STEP_DAYS,
        help="plant the changes between these days into the series (from,to), e.g. 7,12 "
        "for steps on a young baseline",
    )
    return parser.parse_args()


def run_all(args, families, config: DetectorConfig, simulate_one, tally, timer: Timer) -> list:
    """Every family's pairs through the scenarios asked for: [(family, scenario, pair,
    tracks)]. With --peers, each pair's provider has that many other endpoints (null pairs of
    the family on its schedule, drawn from their own generator so the pairs stay the same)."""
    rng = np.random.default_rng(args.seed)
    peer_rng = np.random.default_rng(args.seed + 2000)
    results = []
    for family in families:
        for _ in range(args.pairs):
            for scenario, pair, start_h, end_h in scenarios(
                rng, family, days=args.days, step_days=args.step_days
            ):
                if args.scenario and scenario not in args.scenario.split(","):
                    continue
                if tally is not None:
                    tally.scenario = scenario
                hours = _scheduled(pair)
                peers = [
                    h
                    for _ in range(args.peers)
                    for h in peer_histories(
                        _peer_pair(peer_rng, family, days=args.days, hours=hours)
                    )
                ]
                tracks = simulate_one(
                    pair, config, start_h=start_h, end_h=end_h, timer=timer, peers=peers
                )
                results.append((family, scenario, pair, tracks))
    return results


def main() -> None:
    args = parse_args()
    simulate_one, tally = simulate, None
    if args.confirm or args.confirm_off:  # bench/detector_confirm.py
        import detector_confirm

        from alerts.config import confirm_policy

        policy = confirm_policy()
        if args.confirm_off:
            policy = dataclasses.replace(policy, max_per_series=0)
        simulate_one, tally = detector_confirm.install(globals(), policy)
    config = detector_config()
    for item in args.set:
        name, value = item.split("=")
        current = getattr(config, name)
        parsed = value not in ("0", "false", "False") if isinstance(current, bool) else value
        config = dataclasses.replace(config, **{name: type(current)(parsed)})
    families = heldout.HELD if args.held else FAMILIES
    families = [f for f in families if args.half == "both" or f.tune == (args.half == "tune")]
    families = [f for f in families if not args.family or args.family in f.name]
    families = [dataclasses.replace(f, runs_per_day=args.runs_per_day) for f in families]
    timer = Timer()
    started = time.perf_counter()
    results = run_all(args, families, config, simulate_one, tally, timer)
    elapsed = time.perf_counter() - started
    timings = {
        "detector": f"{timer.seconds / timer.calls * 1e3:.2f} ms ({timer.calls} calls)",
        "whole": "not measured (--no-db)",
    }
    if not args.no_db:
        from evaluation_time import time_evaluations

        timings["whole"] = time_evaluations(runs_per_day=args.runs_per_day)
    acc = score(results, deadline={})
    rows = table(acc, families, timings=timings)
    print(
        f"detector bench: {args.pairs} pairs per family and scenario, {args.days} days, "
        f"{len(families)} families, {args.runs_per_day} runs a day, seed {args.seed}, "
        f"{elapsed:.0f} s"
    )
    print(
        "config: "
        + ", ".join(
            f"{f.name}={getattr(config, f.name)}"
            for f in dataclasses.fields(config)
            if f.name != "rules"
        )
    )
    _print_table(("target", "goal", "held-out families", "tuning families"), rows)
    for line in tally.lines() if tally is not None else []:
        print(line)
    oracle_rng = np.random.default_rng(args.seed + 1000)
    oracles = {}
    for f in families if args.oracle_series else ():
        known = lr_oracle(oracle_rng, f, args.oracle_series)
        oracles[f.name] = known, learned_oracle(oracle_rng, f, args.oracle_series)
    print(
        f"\ndetector ÷ likelihood-ratio oracle, and ÷ the one that learns each series' noise "
        f"from its first 28 days ({args.oracle_series} series a family):"
    )
    header = ("family", "row", "detector", "oracle", "ratio", "learns the noise", "ratio")
    _print_table(header, oracle_rows(acc, families, oracles))
    print(f"elapsed {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
