"""Confirmation runs in the database: after an evaluation, queue the next extra run of a suspect
series (alerts.detection.confirmation says whether and when: several a suspicion, each when the
series' noise model says a run is informative), and tell which runs confirmed an alert.

A confirmation run is an ordinary Run row (origin "confirmation", no schedule) created queued
at its future slot: the tick claims and enqueues it like any due run (dispatch.claim_and_enqueue)
once its slot comes, and a worker claims it like a run a person asked for (it waits behind a
run in flight, it is never skipped). Its evaluation is an ordinary evaluation.

The monthly budget counts confirmation runs over the last 30 days against the runs the enabled
schedules make in 30 days; its price is the schedules' monthly cost (benchmarks.costs) times the
budget's share. Everything here reads the evaluated run's slot, never the wall clock, so a
replayed or late evaluation decides as it would have on time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import numpy as np

from alerts.config import confirm_policy, detector_config
from alerts.detection.confirmation import (
    ConfirmPolicy,
    budget_runs,
    decide,
    earliest_count,
    informative_gap_hours,
    suspect,
)
from alerts.detection.detector import Judgement, SeriesTest, Verdict
from alerts.detection.hysteresis import Streak, counts_from
from alerts.models import SeriesState
from benchmarks.buckets import tod_bucket
from benchmarks.costs import DAYS_PER_MONTH, monthly_cost
from benchmarks.models import Run, RunOrigin, RunStatus, Schedule
from benchmarks.schedules import (
    schedule_endpoints,
    schedule_workloads,
    slots_between,
    slots_per_day,
)
from providers.base import ErrorCategory

log = logging.getLogger(__name__)

MONTH = timedelta(days=DAYS_PER_MONTH)
# Errors that mean the provider is pushing back: an extra run would only add to it.
PUSHBACK = frozenset(
    {ErrorCategory.RATE_LIMITED, ErrorCategory.OVERLOADED, ErrorCategory.QUOTA_EXHAUSTED}
)
WAITING = (RunStatus.QUEUED, RunStatus.RUNNING)
RECENT_RUNS = 10  # the runs whose spacing says how often the series runs


@dataclass(frozen=True, slots=True)
class Suspect:
    """One speed series of the evaluated run, as the confirmation policy reads it."""

    state: SeriesState
    judgement: Judgement
    test: SeriesTest | None
    is_open: bool
    times: np.ndarray  # the series' run times (Unix s), oldest first


def _series(run: Run) -> dict:
    return {"endpoint_id": run.endpoint_id, "workload_id": run.workload_id,
            "vantage_id": run.vantage_id}  # fmt: skip


def healthy(run: Run, *, outage_open: bool) -> bool:
    """The endpoint may take an extra run: enabled, not archived, its provider too, no open
    outage, and the suspect run neither failed, nor half errors, nor pushed back."""
    endpoint, provider = run.endpoint, run.endpoint.provider
    if not (endpoint.enabled and provider.enabled) or endpoint.archived_at or provider.archived_at:
        return False
    if outage_open or run.status not in (RunStatus.DONE, RunStatus.PARTIAL):
        return False
    by_category = (run.summary or {}).get("errors_by_category") or {}
    if PUSHBACK & set(by_category):
        return False
    return run.error_count * 2 < max(run.ok_count + run.error_count, 1)


def _schedules(run: Run) -> list[Schedule]:
    """The enabled schedules that run this series."""
    found = Schedule.objects.filter(
        enabled=True, vantage_id=run.vantage_id, workloads=run.workload_id
    ).prefetch_related("endpoints__provider")
    return [s for s in found if any(e.id == run.endpoint_id for e in schedule_endpoints(s))]


def next_scheduled(run: Run, schedules: list[Schedule]) -> datetime | None:
    """The schedules' next slot of this series after the run's (None: none within a day)."""
    slots = [
        slot
        for schedule in schedules
        for slot in slots_between(schedule, run.slot, run.slot + timedelta(days=1))
    ]
    return min(slots, default=None)


def scheduled_per_month() -> float:
    """Runs the enabled schedules make in 30 days (endpoints × workloads × slots)."""
    total = 0.0
    for schedule in Schedule.objects.filter(enabled=True).prefetch_related("workloads"):
        total += (
            slots_per_day(schedule)
            * DAYS_PER_MONTH
            * len(schedule_endpoints(schedule))
            * len(schedule_workloads(schedule))
        )
    return total


def used_since(moment: datetime) -> int:
    """Confirmation runs with a slot after `moment` that were (or will be) measured."""
    return (
        Run.objects.filter(origin=RunOrigin.CONFIRMATION, slot__gt=moment)
        .exclude(status=RunStatus.SKIPPED)
        .count()
    )


def _run_hours(schedules: list[Schedule], times: np.ndarray) -> float:
    """How far apart the schedules run the series (hours): the densest schedule's spacing; with
    none, the median spacing of the series' last runs (confirmation runs among them)."""
    per_day = max((slots_per_day(s) for s in schedules), default=0.0)
    if per_day > 0:
        return 24.0 / per_day
    if len(times) < 3:
        return 8.0  # the default three runs a day
    return float(np.median(np.diff(times[-RECENT_RUNS:]))) / 3600.0


def after_evaluation(run: Run, suspects: list[Suspect], *, outage_open: bool) -> Run | None:
    """Queue the next confirmation run of the run's series if one of its speed series is
    suspect; the run queued, or None. Series that are not suspect (conclusive either way) start
    their count again."""
    policy = confirm_policy()
    found = []
    for item in suspects:
        if item.judgement.verdict == Verdict.NO_DATA:
            continue
        if _is_suspect(item, policy):
            found.append(item)
        elif item.state.confirmations:
            item.state.confirmations = 0
            item.state.save(update_fields=["confirmations"])
    if not found:
        return None
    # The longest informative gap of the suspect series' noise models (a drifting one waits).
    spacing = max(informative_gap_hours(i.test.baseline if i.test else None, policy) for i in found)
    series = _series(run)
    schedules = _schedules(run)
    run_hours = _run_hours(schedules, found[0].times)
    upcoming = next_scheduled(run, schedules)
    decision = decide(
        newest=run.slot.timestamp(),
        spacing_h=spacing,
        run_hours=run_hours,
        used_by_series=max(i.state.confirmations for i in found),
        pending=Run.objects.filter(
            **series, origin=RunOrigin.CONFIRMATION, status__in=WAITING
        ).exists(),
        used_this_month=used_since(run.slot - MONTH),
        scheduled_per_month=scheduled_per_month(),
        next_scheduled=upcoming.timestamp() if upcoming is not None else None,
        healthy=healthy(run, outage_open=outage_open),
        policy=policy,
        scheduled=bool(schedules),
        counts_from=earliest_count([_counts_from(i.state) for i in found]),
        episode_h=detector_config().episode_hours,
    )
    if decision.at is None:
        log.info("run %s: no confirmation run (%s)", run.id, decision.why)
        return None
    return _queue(run, datetime.fromtimestamp(decision.at, UTC), found)


def _counts_from(state: SeriesState) -> float | None:
    """When a positive of the series would next count toward opening (Unix s; None: now)."""
    at = state.positive_at.timestamp() if state.positive_at is not None else None
    return counts_from(Streak(state.positives, positive_at=at), detector_config())


def _is_suspect(item: Suspect, policy: ConfirmPolicy) -> bool:
    return suspect(
        item.judgement.verdict,
        item.judgement.q_value,
        positives=item.state.positives,
        open_after=detector_config().open_after,
        is_open=item.is_open,
        muted=item.state.muted,
        policy=policy,
    )


def _queue(run: Run, slot: datetime, found: list[Suspect]) -> Run | None:
    Run.objects.bulk_create(
        [
            Run(
                **_series(run),
                slot=slot,
                origin=RunOrigin.CONFIRMATION,
                concurrency=run.concurrency,
                repetitions=run.repetitions,
                context_tokens=run.context_tokens,
                lane=run.lane,
                tod_bucket=tod_bucket(slot),
                note=f"Confirmation of run #{run.id}: its evidence was suggestive but short "
                "of the bar.",
            )
        ],
        ignore_conflicts=True,
    )
    queued = Run.objects.filter(**_series(run), slot=slot, origin=RunOrigin.CONFIRMATION).first()
    if queued is None:
        return None  # another run holds that slot
    for item in found:
        item.state.confirmations += 1
        item.state.save(update_fields=["confirmations"])
    log.info("run %s: confirmation run %s queued at %s", run.id, queued.id, slot)
    return queued


def confirmed_by(run: Run, *, since: datetime) -> list[int]:
    """The confirmation runs of the run's series measured after `since`, up to the run."""
    return list(
        Run.objects.filter(
            **_series(run),
            origin=RunOrigin.CONFIRMATION,
            slot__gt=since,
            slot__lte=run.slot,
            status__in=Run.FINISHED,
        )
        .order_by("slot")
        .values_list("id", flat=True)
    )


@dataclass(frozen=True, slots=True)
class Budget:
    """The month's confirmation budget, for the alerts page and the settings page."""

    share: float
    runs: int  # at most, a month
    used: int  # over the last 30 days
    scheduled: int  # runs the schedules make in 30 days
    usd: Decimal  # what the budget may cost a month at list prices (benchmarks.costs)

    @property
    def text(self) -> str:
        if self.runs <= 0:
            return "Confirmation runs are off."
        return (
            f"Confirmation runs: {self.used} of at most {self.runs} in the last 30 days "
            f"({self.share:.0%} of the schedules' {self.scheduled:,} runs), up to "
            f"${self.usd:,.2f} a month at list prices."
        )


def budget(now: datetime) -> Budget:
    policy = confirm_policy()
    scheduled = scheduled_per_month()
    runs = budget_runs(scheduled, policy) if policy.enabled else 0
    cost = sum((monthly_cost(s).usd for s in Schedule.objects.filter(enabled=True)), Decimal(0))
    share = Decimal(str(policy.budget_share)) if policy.enabled else Decimal(0)
    return Budget(policy.budget_share, runs, used_since(now - MONTH), int(scheduled), cost * share)
