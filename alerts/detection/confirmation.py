"""Confirmation runs: when to ask for an extra run of a series whose evidence is suggestive but
short of the bar, and when that run should happen. Pure (no database): the lifecycle
(alerts/lifecycle/confirm.py) and the bench (bench/detector_confirm.py) share it.

A series is suspect after an evaluation that is one step short of opening an alert: a positive
that is not yet the `open_after`-th in a row, or an in-between result (HOLD) whose q-value is
below the looser `suspect_q`. Then one extra run of that endpoint × workload × vantage is queued,
`spacing_hours` after the suspect run (never inside the run-level noise correlation: a run two
minutes later repeats the provider's state, it does not confirm anything), unless the schedule's
next run comes first, one is already waiting, the series used its `max_per_series` for this
suspicion, or the month's budget (`budget_share` of the scheduled runs) is spent. docs/alerts.md
tells the settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from alerts.detection.detector import Verdict

HOUR_S = 3600.0


@dataclass(frozen=True, slots=True)
class ConfirmPolicy:
    """max_per_series: extra runs one suspicion may ask for (0: confirmation runs are off);
    budget_share: extra runs a month at most, as a share of the scheduled runs; min_spacing_hours:
    the least time between a run and its confirmation; suspect_q: the q-value under which an
    in-between (HOLD) result is suspect; decorrelated: the largest correlation, by the
    baseline's noise model, a confirmation may share with the run it confirms."""

    max_per_series: int = 2
    budget_share: float = 0.15
    min_spacing_hours: float = 6.0
    suspect_q: float = 0.1
    decorrelated: float = 0.5

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
    muted series is never suspect: there is nothing to open.
    """
    if not policy.enabled or is_open or muted:
        return False
    if verdict == Verdict.POSITIVE:
        return positives < open_after
    if verdict == Verdict.HOLD:
        return q_value is not None and q_value < policy.suspect_q
    return False


def spacing_hours(rho: float, run_hours: float, policy: ConfirmPolicy) -> float:
    """Hours from a run to its confirmation: at least `min_spacing_hours`, and long enough that
    the run-level noise correlation (lag-1 autocorrelation `rho` between runs `run_hours` apart,
    decaying as ρ^(Δ/run_hours)) has fallen to `decorrelated`."""
    spacing = policy.min_spacing_hours
    if 0.0 < rho < 1.0 and run_hours > 0 and 0.0 < policy.decorrelated < 1.0:
        needed = run_hours * math.log(policy.decorrelated) / math.log(rho)
        spacing = max(spacing, needed)
    return spacing


def budget_runs(scheduled_per_month: float, policy: ConfirmPolicy) -> int:
    """Confirmation runs a month may hold at most."""
    return max(0, math.floor(policy.budget_share * max(scheduled_per_month, 0.0)))


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
) -> Decision:
    """Whether a suspect series gets a confirmation run, and when.

    newest: the suspect run's time (Unix s); run_hours: how far apart the series' runs are;
    next_scheduled: the schedule's next run of the
    series (None: none planned); healthy: the endpoint is enabled, not archived, not failing
    nor rate-limited; scheduled: an enabled schedule runs the series (a series only people run
    gets no extra runs: the budget is a share of the schedule's).
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
    if run_hours <= spacing_h:
        return Decision(None, f"the series already runs every {run_hours:.1f} h")
    at = newest + spacing_h * HOUR_S
    if next_scheduled is not None and at >= next_scheduled:
        return Decision(None, "the schedule's next run comes first")
    return Decision(at, f"{spacing_h:.1f} h after the suspect run")
