"""Why a planted step was not alerted in time: every missed series, run by run (issue 28).

Replays bench/detector.py's step scenarios (the same draws: every family is generated in the
bench's order, only the chosen ones simulated) through alerts.detection with confirmation runs
(bench/detector_confirm.py) and, for each series whose step was not opened on within its
deadline (+25 / +30 % steps: 36 h, −10 / +15 % steps: 72 h), prints each evaluation from the
step on: the run (scheduled or a confirmation), every arm's p-value and the gates it fails,
the verdict and its reason (a daylight-saving hold, "not seen again", a clear and what it read),
the hysteresis (counted positives, whether the positive counted, the transition) and each
confirmation decision (when the run was placed, or why none). Then one cause per miss, tallied.
With `--scenario null`, every alert on a null series (a false alert) instead: the evaluations
from 60 h before it opened, and the arm that opened it, tallied.

    python bench/detector_misses.py [--pairs 10] [--held] [--family NAME] [--seed 1]
                                   [--scenario step-big,step-small|null] [--metric ttft_ms]
                                   [--quiet] [--set episode_hours=6 ...]

The bench's flapping and probe-infrastructure guards live in alerts/lifecycle (not simulated
here or in bench/detector.py); a young baseline shows as a NO_DATA verdict.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import detector as bench  # noqa: E402  (bench/detector.py: sets up Django)
import detector_confirm  # noqa: E402

from alerts.config import confirm_policy, detector_config  # noqa: E402
from alerts.detection import detector as det  # noqa: E402
from alerts.detection.detector import Verdict  # noqa: E402
from alerts.detection.rules import DECODE, TTFT  # noqa: E402
from alerts.detection.runs import DAY_S  # noqa: E402

BAR = detector_config().p_value
DEADLINE_H = {"step-big": 36.0, "step-small": 72.0}


class Recorder:
    """What the simulation did, evaluation by evaluation, for the pair simulated now."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.pending: list = []  # advance() results of the current evaluation

    def reset(self) -> None:
        self.rows, self.pending = [], []


def _arms_text(test, qs, config) -> str:
    rule = config.rules[test.metric]
    parts = []
    for arm, q in zip(test.arms, qs, strict=True):
        failed = det._arm_failures(arm, q, test, rule, config)
        mark = "+" if not failed else ""
        parts.append(f"{arm.name} {rule.worse_fraction(arm.shift):+.0%} p={arm.p_value:.1e}{mark}")
    return "; ".join(parts)


def _noise_text(baseline) -> str:
    """What the baseline read of its noise: the run's own scale, the correlation of runs a
    spacing apart and its decay, the slow drift's and the walk's variance, its runs and days."""
    if baseline is None:
        return ""
    days = (baseline.end - baseline.start) / DAY_S if baseline.start is not None else 0.0
    return (
        f"scale {baseline.overall_scale:.3f} ρ {baseline.rho:.2f} φ {baseline.phi:.2f} "
        f"drift sd {baseline.drift_var**0.5:.3f} walk sd {baseline.walk_var**0.5:.3f} "
        f"({baseline.n} runs, {days:.0f} days)"
    )


def instrument(rec: Recorder) -> None:
    """Wrap detector_confirm's judge, advance and decide to write `rec`."""
    judge, advance = detector_confirm.judge, detector_confirm.advance
    decide = detector_confirm.decide

    def judged(tests, config):
        out = judge(tests, config)
        flat = [(i, a) for i, t in enumerate(tests) if t.enough for a in t.arms]
        q_all = det.benjamini_hochberg([a.p_value for _, a in flat])
        qs: dict[int, list[float]] = {}
        for (i, _), q in zip(flat, q_all, strict=True):
            qs.setdefault(i, []).append(float(q))
        now = tests[0].now if tests[0].now is not None else tests[-1].now
        row = {"now": now, "series": []}
        for i, (test, j) in enumerate(zip(tests, out, strict=True)):
            row["series"].append(
                {
                    "metric": test.metric,
                    "verdict": j.verdict,
                    "fresh": j.fresh,
                    "reason": j.reason,
                    "q": j.q_value,
                    "arms": _arms_text(test, qs[i], config) if test.enough else "",
                    "settled": test.settled,
                    "shift": test.shift,
                    "latest": test.latest,
                    "dst": test.dst_hold,
                    "best_p": min((a.p_value for a in test.arms), default=1.0),
                    "noise": _noise_text(test.baseline),
                }
            )
        rec.rows.append(row)
        return out

    def advanced(streak, verdict, config, **kw):
        new, transition = advance(streak, verdict, config, **kw)
        k = len(rec.pending)
        if rec.rows and k < len(rec.rows[-1]["series"]):
            s = rec.rows[-1]["series"][k]
            s["before"], s["after"], s["transition"] = streak.positives, new.positives, transition
            s["open"] = new.is_open
        rec.pending.append(transition)
        if len(rec.pending) == 2:
            rec.pending = []
        return new, transition

    def decided(**kw):
        decision = decide(**kw)
        if rec.rows:
            rec.rows[-1]["decision"] = (decision.at, decision.why)
        return decision

    detector_confirm.judge = judged
    detector_confirm.advance = advanced
    detector_confirm.decide = decided


def classify(rows: list[dict], metric: str, at_h: float, deadline_h: float, epoch: float) -> str:
    """The first thing that kept the series' step from opening within the deadline."""
    mine = [
        (r, s)
        for r in rows
        for s in r["series"]
        if s["metric"] == metric and at_h <= (r["now"] - epoch) / 3600 <= at_h + deadline_h
    ]
    if mine and mine[0][1].get("open") and mine[0][1].get("transition") is None:
        return "an alert already open (opened before the step)"
    positives = [(r, s) for r, s in mine if s["verdict"] == Verdict.POSITIVE]
    counted = [(r, s) for r, s in positives if s.get("after", 0) > s.get("before", 0)]
    held = [s for _, s in mine if s["dst"] and "held:" in s["reason"]]
    if not positives:
        if held:
            return "DST guard held it"
        if any(s["verdict"] == Verdict.NO_DATA for _, s in mine):
            return "no data (young baseline / too few runs)"
        best = min(s["best_p"] for _, s in mine)
        near = "best p < 2× the bar" if best < 2 * BAR else "best p ≥ 2× the bar"
        return f"never positive: {_short_of(mine)} ({near})"
    if not counted:
        if any(not s["fresh"] for _, s in positives):
            return "positive, never fresh (newest run not worse by half)"
        return "positive, never independent"
    # counted at least one: what came after the first counted one
    first_t = counted[0][0]["now"]
    after = [(r, s) for r, s in mine if r["now"] > first_t]
    for _, s in after:
        if s["verdict"] == Verdict.CLEAR:
            spike = s["settled"] is not None and s["shift"] - s["settled"] > 0.02
            return "reset by a clear" + (" (spike reading)" if spike else " (24h mean < half)")
        if s["verdict"] == Verdict.POSITIVE and s.get("after", 0) > s.get("before", 0):
            break
    later = [s for _, s in after if s["verdict"] == Verdict.POSITIVE]
    if held or any("held:" in s["reason"] for _, s in after):
        return "one counted positive, then DST guard held"
    if later and all(s.get("after", 0) <= s.get("before", 0) for s in later):
        if any(not s["fresh"] for s in later):
            return "one counted positive, later positives not fresh"
        return "one counted positive, later positives within the episode"
    return "one counted positive, no second positive (holds)"


def _short_of(mine) -> str:
    """What gate the arms failed most often in the window."""
    reasons: Counter = Counter()
    for _, s in mine:
        if s["verdict"] == Verdict.CLEAR:
            reasons["clear"] += 1
            continue
        text = s["reason"].split(": ", 1)[-1]
        for part in text.split("; "):
            key = part.split(" ")[0] if part.startswith(("p", "q")) else part.split(" (")[0]
            if part.startswith("shift") and "<" in part:
                key = "effect gate"
            elif part.startswith("one run"):
                key = "one run carries it"
            reasons[key] += 1
    if not reasons:
        return "?"
    return reasons.most_common(1)[0][0]


def show(rows, metric, at_h, deadline_h, epoch, scheduled_hours) -> None:
    for r in rows:
        if r["now"] is None:  # no series had enough runs to test
            continue
        hour = (r["now"] - epoch) / 3600
        if not at_h - 8 <= hour <= at_h + deadline_h:
            continue
        kind = "sched" if np.isclose(scheduled_hours, hour, atol=1e-6).any() else "CONF "
        for s in r["series"]:
            if s["metric"] != metric:
                continue
            counted = "counted" if s.get("after", 0) > s.get("before", 0) else ""
            print(
                f"  {hour - at_h:+6.1f} h {kind} {s['verdict'].value:8s} q={s['q'] or 1:.1e} "
                f"fresh={int(s['fresh'])} pos={s.get('after', '?')} {counted} "
                f"{s.get('transition') or ''} latest={s['latest'] or 0:+.0%} "
                f"settled={s['settled'] or 0:+.0%} | {s['reason']}"
            )
            print(f"           arms: {s['arms']}")
        if "decision" in r:
            when, why = r["decision"]
            placed = f"at {(when - epoch) / 3600 - at_h:+.1f} h" if when else "none"
            print(f"           confirmation: {placed} ({why})")


def _false_alerts(rows, track, pair, metric: str, what: str, quiet: bool) -> Counter:
    """A null series' alerts (every one false), each by the arm that opened it, and, unless
    `quiet`, each alert's evaluations from 60 h before it opened."""
    opened: Counter = Counter()
    epoch = pair.truth.get("epoch_s", bench.EPOCH_S)
    for hour, kind in track.events:
        if kind != "open":
            continue
        at = [
            s
            for r in rows
            if r["now"] is not None and abs((r["now"] - epoch) / 3600 - hour) < 1e-3
            for s in r["series"]
            if s["metric"] == metric
        ]
        arm = at[0]["reason"] if at else "?"
        opened[f"false alert, opened by {arm}"] += 1
        if not quiet:
            noise = at[0]["noise"] if at else ""
            print(f"\n{what}: false alert opened at day {hour / 24:.1f}; {arm}; baseline {noise}")
            show(rows, metric, hour - 60, 64, epoch, pair.hours[pair.truth["scheduled"]])
    return opened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--held", action="store_true", help="the held-out families (report)")
    parser.add_argument("--family", help="only families whose name contains this")
    parser.add_argument("--scenario", default="step-big,step-small", help="or null: false alerts")
    parser.add_argument("--metric", help="decode_tps or ttft_ms (default both)")
    parser.add_argument("--quiet", action="store_true", help="the tally only")
    parser.add_argument("--set", nargs="*", default=[], help="override a DetectorConfig field")
    args = parser.parse_args()
    policy = confirm_policy()
    simulate, tally = detector_confirm.install(vars(bench), policy)
    config = detector_config()
    for item in args.set:
        name, value = item.split("=")
        config = dataclasses.replace(config, **{name: type(getattr(config, name))(value)})
    rec = Recorder()
    instrument(rec)
    families = bench.heldout.HELD if args.held else bench.FAMILIES
    wanted = args.scenario.split(",")
    metrics = [args.metric] if args.metric else [DECODE, TTFT]
    rng = np.random.default_rng(args.seed)
    causes: dict[str, Counter] = {}
    totals: Counter = Counter()
    timer = bench.Timer()
    for family in families:
        chosen = (family.tune != args.held) and (not args.family or args.family in family.name)
        for n in range(args.pairs):
            for scenario, pair, start_h, end_h in bench.scenarios(rng, family, days=args.days):
                if not chosen or scenario not in wanted:
                    continue
                rec.reset()
                tally.scenario = scenario
                tracks = simulate(pair, config, start_h=start_h, end_h=end_h, timer=timer)
                at, deadline = pair.truth.get("at"), DEADLINE_H.get(scenario)  # none: null
                epoch = pair.truth.get("epoch_s", bench.EPOCH_S)
                for metric, track in zip(bench.METRICS, tracks, strict=True):
                    if metric not in metrics:
                        continue
                    if scenario == "null":
                        what = f"{family.name} #{n} null {metric}"
                        causes.setdefault(f"null {metric}", Counter()).update(
                            _false_alerts(rec.rows, track, pair, metric, what, args.quiet)
                        )
                        totals[f"null {metric}"] += 1
                        continue
                    key = f"{scenario} {metric}"
                    totals[key] += 1
                    first = bench._first(track.events, "open", at)
                    if first is not None and first - at <= deadline:
                        continue
                    cause = classify(rec.rows, metric, at, deadline, epoch)
                    causes.setdefault(key, Counter())[cause] += 1
                    if not args.quiet:
                        late = "never" if first is None else f"{first - at:.0f} h"
                        print(f"\n{family.name} #{n} {key}: opened {late}; cause: {cause}")
                        scheduled = pair.hours[pair.truth["scheduled"]]
                        show(rec.rows, metric, at, deadline, epoch, scheduled)
    print("\nmissed (not opened within the deadline), by cause; null: false alerts, by arm:")
    for key in sorted(totals):
        missed = sum(causes.get(key, Counter()).values())
        if key.startswith("null"):
            print(f"{key}: {missed} false alerts in {totals[key]} series")
        else:
            print(f"{key}: {missed} of {totals[key]} missed")
        for cause, count in causes.get(key, Counter()).most_common():
            print(f"    {count:3d}  {cause}")


if __name__ == "__main__":
    main()
