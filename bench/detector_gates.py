"""Which gate stops a small step (issue 28): the detector's gates relaxed one at a time.

Runs the real detector (assess_together / judge / hysteresis.advance, as bench/detector.py's
simulate) on the tuning families' step-small pairs (and, with --null, their null pairs) and
 1. attributes every evaluation from the step to 72 h after it, on a series not yet caught,
    to what stopped it: a "clear" verdict (resets the count), a positive the newest run does
    not back ("fresh"), or, for a hold, the gates its nearest arm failed (p, q, effect gate,
    absolute floor, one run carries it);
 2. re-runs the pairs with one gate relaxed at a time (bench-side: the product is untouched)
    and counts catches within 72 h and false alert episodes on the null pairs.

    python bench/detector_gates.py [--pairs 6] [--family shared] [--null] [--relax all|p,q,...]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

import django  # noqa: E402

django.setup()

from detector import METRICS, scenarios  # noqa: E402
from detector_generators import EPOCH_S, FAMILIES  # noqa: E402

from alerts.config import detector_config  # noqa: E402
from alerts.detection import detector as det  # noqa: E402
from alerts.detection.detector import SeriesInput, Verdict, assess_together, judge  # noqa: E402
from alerts.detection.hysteresis import Streak, Transition, advance, counted_at  # noqa: E402
from alerts.detection.runs import Runs  # noqa: E402

GATES = ("p", "q", "effect", "floor", "one-run")
RELAX = (*GATES, "fresh", "clear-reset", "spike")


def _tag(failure: str) -> str:
    if failure.startswith("p ="):
        return "p"
    if failure.startswith("q ="):
        return "q"
    if failure.startswith("one run"):
        return "one-run"
    return "floor" if "%" not in failure.split("<")[1] else "effect"


@contextmanager
def relaxed(gate: str | None):
    """The detector with one arm gate left out (bench-side patch of detector._arm_failures)."""
    original, spike = det._arm_failures, det.spike
    if gate in GATES:
        det._arm_failures = lambda *a: [f for f in original(*a) if _tag(f) != gate]
    if gate == "spike":
        det.spike = lambda resid, scales: np.zeros(len(resid), bool)
    try:
        yield
    finally:
        det._arm_failures, det.spike = original, spike


def nearest_miss(test, config) -> list[str]:
    """The gates failed by the arm that failed fewest (ties: the smallest p)."""
    rule = config.rules[test.metric]
    qs = det.benjamini_hochberg([a.p_value for a in test.arms])
    best = min(
        (det._arm_failures(a, q, test, rule, config) for a, q in zip(test.arms, qs, strict=True)),
        key=len,
    )
    return sorted({_tag(f) for f in best})


def run_pair(pair, config, *, start_h, end_h, gate, log=None, arms=None):
    seconds = np.round(pair.hours * 3600) + pair.truth.get("epoch_s", EPOCH_S)
    histories = [
        Runs.from_samples(v.ravel(), np.repeat(seconds, v.shape[1]))
        for v in (pair.decode, pair.ttft)
    ]
    streaks, frozen, opened = [Streak(), Streak()], [None, None], [None, None]
    segment, opens, watched = [-np.inf, -np.inf], [[], []], [0.0, 0.0]
    at, previous = pair.truth.get("at"), None
    for hour, now in zip(pair.hours, seconds, strict=True):
        if not start_h <= hour <= end_h:
            continue
        items = [
            SeriesInput(h.between(s, np.inf), config.rules[m], f, o, counted_at=counted_at(k))
            for h, m, f, o, s, k in zip(
                histories, METRICS, frozen, opened, segment, streaks, strict=True
            )
        ]
        tests = assess_together(items, now=now, config=config)
        judgements = judge(tests, config)
        for k, j in enumerate(judgements):
            verdict, fresh = j.verdict, j.fresh
            if gate == "fresh":
                fresh = True
            if gate == "clear-reset" and verdict == Verdict.CLEAR and not streaks[k].is_open:
                verdict = Verdict.HOLD
            if log is not None and at is not None and at <= hour <= at + 72 and not opens[k]:
                if j.verdict == Verdict.CLEAR:
                    log[k]["clear (resets)"] += 1
                elif j.verdict == Verdict.POSITIVE:
                    log[k]["positive" if j.fresh else "positive, not fresh"] += 1
                elif j.verdict == Verdict.HOLD:
                    log[k]["hold: " + "+".join(nearest_miss(tests[k], config))] += 1
                    best = min(tests[k].arms, key=lambda a: a.p_value)
                    decade = int(np.floor(np.log10(max(best.p_value, 1e-12))))
                    arms[k][f"{best.name.split(' ')[0]} p~1e{decade}"] += 1
                else:
                    log[k]["no data"] += 1
            streaks[k], tr = advance(
                streaks[k],
                verdict,
                config,
                recovered=j.recovered,
                fresh=fresh,
                new_normal=j.new_normal,
            )
            if tests[k].enough and previous is not None:
                watched[k] += hour - previous
            if tr == Transition.OPEN:
                frozen[k], opened[k] = tests[k].baseline, j.opened
                opens[k].append(hour)
            elif tr in (Transition.RESOLVE, Transition.NEW_NORMAL):
                if tr == Transition.NEW_NORMAL:
                    segment[k] = opened[k].at - 1.0
                frozen[k], opened[k] = None, None
        previous = hour
    return opens, watched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--family", default="")
    parser.add_argument("--null", action="store_true", help="also the null pairs (slow)")
    parser.add_argument("--relax", default="all", help="gates to relax, comma-separated, or none")
    parser.add_argument("--set", nargs="*", default=[], help="override a DetectorConfig field")
    args = parser.parse_args()
    config = detector_config()
    for item in args.set:
        name, value = item.split("=")
        config = dataclasses.replace(config, **{name: type(getattr(config, name))(value)})
    families = [f for f in FAMILIES if f.tune and args.family in f.name]
    cases = []  # (family, scenario, pair, start, end)
    for family in families:
        rng = np.random.default_rng([args.seed, FAMILIES.index(family)])
        for _ in range(args.pairs):
            for scenario, pair, start, end in scenarios(rng, family, days=args.days):
                if scenario == "step-small":
                    cases.append((family, scenario, pair, start, pair.truth["at"] + 72))
                elif scenario == "null" and args.null:
                    cases.append((family, scenario, pair, start, end))
    relax = [] if args.relax == "none" else RELAX if args.relax == "all" else args.relax.split(",")
    for gate in [None, *relax]:
        log = [Counter(), Counter()] if gate is None else None
        arms = [Counter(), Counter()]
        where = [Counter(), Counter()]  # false alert episodes by family
        caught = [[0, 0], [0, 0]]  # per metric: caught, series
        false = [[0, 0.0], [0, 0.0]]  # per metric: episodes, hours watched
        with relaxed(gate):
            for _family, scenario, pair, start, end in cases:
                opens, watched = run_pair(
                    pair, config, start_h=start, end_h=end, gate=gate, log=log, arms=arms
                )
                for k in range(2):
                    if scenario == "null":
                        false[k][0] += len(opens[k])
                        if opens[k]:
                            where[k][_family.name] += len(opens[k])
                        false[k][1] += watched[k]
                    else:
                        at = pair.truth["at"]
                        caught[k][0] += any(at <= h <= at + 72 for h in opens[k])
                        caught[k][1] += 1
        cells = []
        for k, metric in enumerate(METRICS):
            c, n = caught[k]
            cell = f"{metric} {c}/{n} ({c / max(n, 1):.0%})"
            if args.null:
                months = false[k][1] / (30 * 24)
                cell += f", false {false[k][0]} ({false[k][0] / max(months, 1e-9):.3f}/s-mo)"
            cells.append(cell)
        print(f"relax {gate or 'nothing':12s} | " + " | ".join(cells), flush=True)
        for k, metric in enumerate(METRICS):
            if where[k]:
                print(f"  false {metric}: " + ", ".join(f"{n} {c}" for n, c in where[k].items()))
        if log is not None:
            for k, metric in enumerate(METRICS):
                total = sum(log[k].values())
                print(f"  evaluations of uncaught {metric} series within 72 h ({total}):")
                for key, count in log[k].most_common():
                    print(f"    {key:40s} {count:5d} ({count / total:.0%})")
                print(f"  holds of uncaught {metric} series: the surest arm and its p")
                for key, count in sorted(arms[k].items()):
                    print(f"    {key:40s} {count:5d}")


if __name__ == "__main__":
    main()
