"""Confirmation runs: when to ask for an extra run of a series whose evidence is suggestive but
short of the bar, and when that run should happen. Pure (no database): the lifecycle
(alerts/lifecycle/confirm.py) and the bench (bench/detector_confirm.py) share it.

A series is suspect after an evaluation that is short of opening an alert but not clear: a
positive that is not yet the `open_after`-th in a row, or an in-between result (HOLD) whose
q-value is below the loose `suspect_q`. While it stays suspect it gets extra runs of that
endpoint × workload × vantage, one at a time, each as soon as the series' own noise model says a
run is informative (its correlation with the run before has fallen to `decorrelated`, never
sooner than `min_spacing_hours`), spread evenly over the time to the schedule's next run, up to
`max_per_series` for the suspicion. After a positive, the run waits until its own positive would
count toward opening (hysteresis.independent: a provider episode later); one that could only
count when the schedule's next run is about to come is not spent. The runs stop when the
evidence is conclusive either way (an alert opens, or the series is clear or its q-value back
above `suspect_q`), when the series used its cap, or when the month's budget (`budget_share` of
the scheduled runs) is spent.
docs/alerts.md tells the settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from alerts.detection.detector import Verdict
from alerts.detection.runs import HOUR_S

LONGEST_GAP_H = 48.0  # a correlation that lasts longer than this leaves no room for a confirmation
GAP_STEP_H = 0.25  # the resolution of the informative gap
SOONER_H = 1.0  # a confirmation must be able to count this much before the schedule's next run


class NoiseModel(Protocol):
    """What the policy reads of a fitted baseline (alerts.detection.baseline.Baseline)."""

    def correlations(self, t: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class ConfirmPolicy:
    """max_per_series: extra runs one suspicion may ask for (0: confirmation runs are off);
    budget_share: extra runs a month at most, as a share of the scheduled runs; min_spacing_hours:
    the least time between two runs of a suspicion (that a provider episode of a few hours is
    one piece of evidence is the opening rule's, hysteresis.independent); suspect_q: the
    q-value under which an in-between (HOLD) result is suspect; decorrelated: the largest
    correlation, by the baseline's noise model, a confirmation may share with the run before
    it."""

    max_per_series: int = 12
    budget_share: float = 0.15
    min_spacing_hours: float = 2.0
    suspect_q: float = 0.5
    decorrelated: float = 0.7

    @property
    def enabled(self) -> bool:
        return self.max_per_series > 0 and self.budget_share > 0


def suspect(
    verdict: str,
    q_value: float | None,
    *,
    positives: int,
    open_after: int,
    is_open: bool,
    muted: bool,
    policy: ConfirmPolicy,
) -> bool:
    """Whether an evaluation's evidence is suggestive but short of opening an alert.

    `positives` is the streak's count after this evaluation (hysteresis.advance). An open or a
    muted series is never suspect: there is nothing to open. A clear series is not: the
    evidence says "not worse".
    """
    if not policy.enabled or is_open or muted:
        return False
    if verdict == Verdict.POSITIVE:
        return positives < open_after
    if verdict == Verdict.HOLD:
        return q_value is not None and q_value < policy.suspect_q
    return False


def informative_gap_hours(model: NoiseModel | None, policy: ConfirmPolicy) -> float:
    """The shortest gap (hours) at which a run is informative about a series: its residual's
    correlation with the run before, by the baseline's noise model in real time, is at most
    `decorrelated`; never under `min_spacing_hours`. Independent noise: the minimum; a
    provider drifting slowly: hours or days (LONGEST_GAP_H at most)."""
    floor = policy.min_spacing_hours
    if model is None or not 0.0 < policy.decorrelated < 1.0:
        return floor
    gaps = np.arange(floor, LONGEST_GAP_H + GAP_STEP_H, GAP_STEP_H)
    for gap in gaps:
        if model.correlations(np.array([0.0, gap * HOUR_S]))[0, 1] <= policy.decorrelated:
            return float(gap)
    return LONGEST_GAP_H


def earliest_count(times: list[float | None]) -> float | None:
    """When a run's positive would first count for any of the suspect series it measures
    (hysteresis.counts_from of each; None: at once, for one of them)."""
    if not times or any(t is None for t in times):
        return None
    return min(t for t in times if t is not None)


def budget_runs(scheduled_per_month: float, policy: ConfirmPolicy) -> int:
    """Confirmation runs a month may hold at most."""
    return max(0, math.floor(policy.budget_share * max(scheduled_per_month, 0.0)))


def place(
    newest: float,
    spacing_h: float,
    next_scheduled: float | None,
    counts_from: float | None = None,
    episode_h: float = 0.0,
) -> float | None:
    """When the next run of a suspicion goes (Unix s): the runs that fit between the newest run
    and the schedule's next one, `spacing_h` or more apart, spread evenly, and this the first
    of them; None when none fits. With no scheduled run coming, `spacing_h` after the newest.

    counts_from: the earliest time a positive would count toward opening (the streak's last
    counted positive a provider episode later, hysteresis.counts_from); the run goes no sooner,
    and not at all unless that leaves it SOONER_H before the schedule's next run: a run whose
    positive could not count adds nothing the schedule's own run would not. With no positive
    to wait for (a suspect hold), the run goes no later than `episode_h` before the schedule's
    next run when it can: its positive then leaves that run free to be the second one."""
    if next_scheduled is None:
        return max(newest + spacing_h * HOUR_S, counts_from or -math.inf)
    gap_h = (next_scheduled - newest) / HOUR_S
    if counts_from is not None and counts_from > newest + spacing_h * HOUR_S:
        at = counts_from
        return at if at <= next_scheduled - SOONER_H * HOUR_S else None
    fits = math.floor(gap_h / spacing_h + 1e-9) - 1
    if fits < 1:
        return None
    even = newest + gap_h / (fits + 1) * HOUR_S
    aim = next_scheduled - episode_h * HOUR_S
    if counts_from is None and episode_h > 0 and newest + spacing_h * HOUR_S <= aim < even:
        return aim
    return even


@dataclass(frozen=True, slots=True)
class Decision:
    """When to run the confirmation (Unix s), or None and why not."""

    at: float | None
    why: str


def decide(
    *,
    newest: float,
    spacing_h: float,
    run_hours: float,
    used_by_series: int,
    pending: bool,
    used_this_month: int,
    scheduled_per_month: float,
    next_scheduled: float | None,
    healthy: bool,
    policy: ConfirmPolicy,
    scheduled: bool = True,
    counts_from: float | None = None,
    episode_h: float = 0.0,
) -> Decision:
    """Whether a suspect series gets its next confirmation run, and when.

    newest: the suspect run's time (Unix s); spacing_h: informative_gap_hours; run_hours: how
    far apart the series' scheduled runs are; used_by_series: runs this suspicion already
    asked for; next_scheduled: the schedule's next run of the series (None: none planned);
    healthy: the endpoint is enabled, not archived, not failing nor rate-limited; scheduled: an
    enabled schedule runs the series (a series only people run gets no extra runs: the budget
    is a share of the schedule's); counts_from: the earliest time a positive of the series
    would count toward opening (hysteresis.counts_from; None: any time); episode_h: how far
    apart two positives must be to count (DetectorConfig.episode_hours).
    """
    if not policy.enabled:
        return Decision(None, "confirmation runs are off")
    if not scheduled:
        return Decision(None, "no schedule runs this series")
    if not healthy:
        return Decision(None, "the endpoint is failing, rate-limited, disabled or archived")
    if pending:
        return Decision(None, "a confirmation run is already waiting")
    if used_by_series >= policy.max_per_series:
        return Decision(None, f"this suspicion used its {policy.max_per_series} runs")
    budget = budget_runs(scheduled_per_month, policy)
    if used_this_month >= budget:
        return Decision(None, f"the month's budget of {budget} confirmation runs is spent")
    if run_hours < 2 * spacing_h:
        return Decision(None, f"the series already runs every {run_hours:.1f} h")
    at = place(newest, spacing_h, next_scheduled, counts_from, episode_h)
    if at is None:
        if counts_from is not None and counts_from > newest + spacing_h * HOUR_S:
            return Decision(None, "no run that could count fits before the schedule's next")
        return Decision(None, f"no run {spacing_h:.1f} h apart fits before the schedule's next")
    return Decision(at, f"{(at - newest) / HOUR_S:.1f} h after the suspect run")
