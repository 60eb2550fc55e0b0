"""Confirmation runs in the detector bench (`python bench/detector.py --confirm`).

Each generated pair gets candidate confirmation times between its scheduled runs (every
GRID_H hours after a scheduled run, before the next); the generator draws values there too
(make_pair on the denser grid). The simulation then evaluates like bench/detector.simulate, but
a candidate run exists only when the pure policy (alerts.detection.confirmation, as
alerts/lifecycle/confirm.py applies it) asked for it after a suspect evaluation: the first
candidate at or after the time the policy placed it, before the schedule's next run. The
monthly budget is held per series (`budget_share` of its scheduled runs over the last 30 days),
the share the install-wide budget gives each series on average (in an install, the budget is
shared: series that are not suspect leave theirs to those that are).

Caveat: bench/detector_generators' shared AR(1) noise (φ per run) steps per generated run, so
on the denser grid it decorrelates faster between scheduled runs than without --confirm (the
held-out families' drift is in real time).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np
from detector_generators import EPOCH_S

from alerts.detection.confirmation import (
    ConfirmPolicy,
    decide,
    earliest_count,
    informative_gap_hours,
    suspect,
)
from alerts.detection.detector import SeriesInput, assess_together, judge
from alerts.detection.hysteresis import Streak, Transition, advance, counted_at, counts_from
from alerts.detection.rules import DECODE, TTFT, DetectorConfig
from alerts.detection.runs import Runs

METRICS = (DECODE, TTFT)
MONTH_H = 30 * 24.0
GRID_H = 0.5  # candidate confirmation times: every half hour between scheduled runs
APART_H = 0.1  # and not within 6 minutes of the next (a run slot is a whole second)


def candidate_hours(scheduled: np.ndarray) -> np.ndarray:
    """Times where a confirmation may run: every GRID_H after each scheduled run, before the
    next scheduled run."""
    gaps = np.diff(scheduled)
    out = [
        start + np.arange(GRID_H, gap - APART_H, GRID_H)
        for start, gap in zip(scheduled[:-1], gaps, strict=True)
    ]
    out.append(scheduled[-1] + np.arange(GRID_H, 24.0, GRID_H))
    return np.concatenate(out)


def dense(make_pair: Callable, slots: Callable) -> Callable:
    """make_pair on the scheduled slots plus the candidates; truth["scheduled"] marks which
    generated runs the schedule makes."""

    def make(rng, family, *, days, hours=None, **kwargs):
        scheduled = slots(rng, days, family) if hours is None else hours
        every = np.union1d(scheduled, candidate_hours(scheduled))
        pair = make_pair(rng, family, days=days, hours=every, **kwargs)
        pair.truth["scheduled"] = np.isin(every, scheduled)
        return pair

    return make


class Tally:
    """Confirmation runs and scheduled runs simulated, per scenario."""

    def __init__(self) -> None:
        self.extra: dict[str, int] = defaultdict(int)
        self.scheduled: dict[str, int] = defaultdict(int)
        self.opens: dict[str, int] = defaultdict(int)
        self.opens_on_extra: dict[str, int] = defaultdict(int)  # opened by a confirmation run
        self.scenario = "?"  # the scenario simulated now (bench/detector.py sets it)

    def count_opens(self, tracks, hours: np.ndarray, scheduled: np.ndarray) -> None:
        """Alerts opened, and how many on a confirmation run's evaluation."""
        extra = set(hours[~scheduled].tolist())
        for track in tracks:
            for hour, kind in track.events:
                if kind == "open":
                    self.opens[self.scenario] += 1
                    self.opens_on_extra[self.scenario] += hour in extra

    def lines(self) -> list[str]:
        out = []
        for scenario in sorted(self.scheduled):
            share = self.extra[scenario] / max(self.scheduled[scenario], 1)
            out.append(
                f"confirmation runs, {scenario}: {self.extra[scenario]} for "
                f"{self.scheduled[scenario]} scheduled runs ({share:.1%}); alerts opened "
                f"{self.opens[scenario]}, {self.opens_on_extra[scenario]} of them on a "
                "confirmation run's evaluation"
            )
        return out


def simulate(
    pair,
    config: DetectorConfig,
    *,
    start_h: float,
    end_h: float,
    timer,
    policy: ConfirmPolicy,
    tally: Tally,
    track_type: type,
    peer_lags: Callable = lambda now: (),
):
    """bench/detector.simulate with confirmation runs: the same tracks; the runs counted in
    `tally` (under its current scenario). peer_lags(now): what the provider's other series
    read of their noise then (bench/detector.peer_lags)."""
    epoch = pair.truth.get("epoch_s", EPOCH_S)
    seconds = np.round(pair.hours * 3600) + epoch
    scheduled = pair.truth["scheduled"]
    extra = seconds[~scheduled]  # the candidates are extra runs (Runs.extra), as confirmations are
    histories = [
        Runs.from_samples(values.ravel(), np.repeat(seconds, values.shape[1]), None, extra)
        for values in (pair.decode, pair.ttft)
    ]
    included = scheduled.copy()  # which generated runs exist (the candidates once asked for)
    # Each history's runs by generated run (a run whose samples all failed has none)
    rows = [np.searchsorted(seconds, h.t) for h in histories]
    state = _State(track_type)
    wanted: int | None = None  # the Unix time (whole seconds) of the confirmation run asked for
    asked: list[float] = []  # hours of the confirmation runs asked for (the budget's window)
    used = 0  # by the current suspicion
    run_hours = float(np.median(np.diff(pair.hours[scheduled])))
    for i, (hour, now) in enumerate(zip(pair.hours, seconds, strict=True)):
        if not scheduled[i]:
            # Compared in whole seconds, as the runs' times are: in hours, a candidate the
            # policy asked for exactly could read a rounding short and go half an hour later.
            if wanted is None or now < wanted or not start_h <= hour <= end_h:
                continue
            included[i], wanted = True, None
            tally.extra[tally.scenario] += 1
        elif start_h <= hour <= end_h:
            tally.scheduled[tally.scenario] += 1
            wanted = None  # the schedule's run came first
        else:
            continue
        peers = peer_lags(now)  # the provider's other series' stored readings, live
        began = time.perf_counter()
        existing = [h.where(included[r]) for h, r in zip(histories, rows, strict=True)]
        items = state.inputs(existing, config)
        tests = assess_together(items, now=now, config=config, peers=peers)
        judgements = judge(tests, config)
        timer.seconds += time.perf_counter() - began
        timer.calls += len(tests)
        suspects = state.advance(hour, tests, judgements, config, policy, now=float(now))
        if not suspects:
            used = 0
            continue
        spacing = max(informative_gap_hours(t.baseline, policy) for t in tests)
        upcoming = seconds[scheduled & (pair.hours > hour)]
        # Every time the policy reads is a Unix time, as the streak's positive_at (`now`)
        # is: a run's slot, the schedule's next, when a positive would count.
        decision = decide(
            newest=float(now),
            spacing_h=spacing,
            run_hours=run_hours,
            used_by_series=used,
            pending=wanted is not None,
            used_this_month=sum(h > hour - MONTH_H for h in asked),
            scheduled_per_month=MONTH_H / run_hours,
            next_scheduled=float(upcoming[0]) if len(upcoming) else None,
            healthy=True,
            policy=policy,
            counts_from=earliest_count(state.counts_from),
            episode_h=config.episode_hours,
        )
        if decision.at is not None:
            wanted, used = round(decision.at), used + 1
            asked.append((wanted - epoch) / 3600)
    tally.count_opens(state.tracks, pair.hours, scheduled)
    return state.tracks


class _State:
    """The hysteresis of both series of a pair, as bench/detector.simulate keeps it."""

    def __init__(self, track_type: type) -> None:
        self.streaks = [Streak(), Streak()]
        self.frozen: list = [None, None]
        self.opened: list = [None, None]
        self.segment = [-np.inf, -np.inf]
        self.tracks = [track_type(), track_type()]
        self.previous: float | None = None

    def inputs(self, histories: list[Runs], config: DetectorConfig) -> list[SeriesInput]:
        """Both series to test now: their runs since a new normal, what an open alert froze
        and the streak's counted positive."""
        return [
            SeriesInput(h.between(s, np.inf), config.rules[m], f, o, counted_at=counted_at(k))
            for h, m, f, o, s, k in zip(
                histories, METRICS, self.frozen, self.opened, self.segment, self.streaks,
                strict=True,
            )
        ]  # fmt: skip

    def advance(self, hour, tests, judgements, config, policy, *, now: float) -> bool:
        """One evaluation of both series; whether either is suspect after it."""
        any_suspect = False
        self.counts_from: list[float | None] = []  # of the suspect series (hysteresis)
        for k, judgement in enumerate(judgements):
            self.streaks[k], transition = advance(
                self.streaks[k], judgement.verdict, config, recovered=judgement.recovered,
                fresh=judgement.fresh, new_normal=judgement.new_normal, at=now,
            )  # fmt: skip
            if tests[k].enough and self.previous is not None:
                self.tracks[k].watched_h += hour - self.previous
            if transition == Transition.OPEN:
                self.frozen[k], self.opened[k] = tests[k].baseline, judgement.opened
                self.tracks[k].events.append((hour, "open"))
            elif transition == Transition.RESOLVE:
                self.frozen[k], self.opened[k] = None, None
                self.tracks[k].events.append((hour, "resolve"))
            elif transition == Transition.NEW_NORMAL:
                self.segment[k] = self.opened[k].at - 1.0
                self.frozen[k], self.opened[k] = None, None
                self.tracks[k].events.append((hour, "new_normal"))
            streak = self.streaks[k]
            if suspect(
                judgement.verdict, judgement.q_value, positives=streak.positives,
                open_after=config.open_after, is_open=streak.is_open, muted=streak.muted,
                policy=policy,
            ):  # fmt: skip
                any_suspect = True
                self.counts_from.append(counts_from(streak, config))
        self.previous = hour
        return any_suspect


def install(namespace: dict, policy: ConfirmPolicy) -> tuple[Callable, Tally]:
    """Switch bench/detector.py to confirmation runs: its pairs get candidate times, and its
    simulate becomes this one (the caller sets tally.scenario). Returns (simulate, tally)."""
    for module in (namespace["generators"], namespace["heldout"]):
        module.make_pair = dense(module.make_pair, module.slots)
    tally = Tally()

    def run(pair, config, *, start_h, end_h, timer, peers=()):
        return simulate(
            pair, config, start_h=start_h, end_h=end_h, timer=timer, policy=policy,
            tally=tally, track_type=namespace["Track"],
            peer_lags=lambda now: namespace["peer_lags"](peers, now, config) if peers else (),
        )  # fmt: skip

    return run, tally
