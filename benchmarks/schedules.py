"""When a schedule fires (slots in UTC; times of day in its time zone) and which runs it owes at
a tick."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.db.models import Max

from providers.models import Endpoint

from .buckets import tod_bucket
from .models import Run, RunOrigin, RunStatus, Schedule, Workload
from .validators import parse_times_of_day

logger = logging.getLogger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# After a long outage, at most this many missed slots per (endpoint, workload) are recorded.
MAX_SKIPPED_PER_SERIES = 100
SKIPPED_REASON = "Missed slot (no tick ran in time); only the latest missed slot is run."
# A slot whose tick was missed (beat or database down) is still run while it is at most
# TOKSPEED_RUN_LATE_S late; past that budget it is skipped, and says so.
PAST_BUDGET_REASON = (
    "Missed slot: no tick ran within its lateness budget of {budget:g} s (beat or database "
    "down); only the latest missed slot is run."
)
CAUGHT_UP_NOTE = (
    "Queued {late:.0f} s after its slot: its tick was missed or delayed (database or beat "
    "down); caught up within the {budget:g} s lateness budget."
)
LATEST_NOTE = "Queued {late:.0f} s after its slot: no tick ran in time (beat or database down)."
# A run queued more than this after its slot says so (an on-time tick queues within seconds).
LATE_NOTE_S = 20.0


def slots_between(schedule: Schedule, start: datetime, end: datetime) -> list[datetime]:
    """The schedule's slots s with start < s <= end, ascending, in UTC.

    Interval slots are aligned to the Unix epoch, so they do not drift with restarts. Times of
    day are read in the schedule's time zone (UTC when it has none): a local time that a
    daylight-saving change skips comes an hour later that day, one it repeats comes once (the
    first); two that land on one instant are one slot.
    """
    start, end = start.astimezone(UTC), end.astimezone(UTC)
    if end <= start:
        return []
    if schedule.interval_minutes:
        step = schedule.interval_minutes * 60
        first = int((start - EPOCH).total_seconds()) // step + 1
        last = int((end - EPOCH).total_seconds()) // step
        return [EPOCH + timedelta(seconds=n * step) for n in range(first, last + 1)]
    times = parse_times_of_day(schedule.times_of_day)
    zone = schedule_zone(schedule)
    slots = set()
    day, last_day = start.astimezone(zone).date(), end.astimezone(zone).date()
    while day <= last_day:
        for moment in times:
            slot = datetime.combine(day, moment, tzinfo=zone).astimezone(UTC)
            if start < slot <= end:
                slots.add(slot)
        day += timedelta(days=1)
    return sorted(slots)


def schedule_zone(schedule: Schedule) -> tzinfo:
    """The zone a schedule's times of day are in: its time zone, or UTC (also, with a warning,
    for a name this machine's time zone database no longer knows)."""
    if not schedule.time_zone:
        return UTC
    try:
        return ZoneInfo(schedule.time_zone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        logger.warning(
            "schedule %s: unknown time zone %r; its times of day are read in UTC",
            schedule.pk,
            schedule.time_zone[:80],
        )
        return UTC


def latest_slot(schedule: Schedule, now: datetime) -> datetime | None:
    """The most recent slot at or before `now` (None when the schedule has no timing)."""
    if schedule.interval_minutes:
        window = timedelta(minutes=schedule.interval_minutes)
    elif schedule.times_of_day:
        window = timedelta(days=2)  # a local day can be 25 hours long
    else:
        return None
    slots = slots_between(schedule, now - window, now)
    return slots[-1] if slots else None


def slots_per_day(schedule: Schedule) -> float:
    if schedule.interval_minutes:
        return 24 * 60 / schedule.interval_minutes
    return float(len(parse_times_of_day(schedule.times_of_day or [])))


def schedule_endpoints(schedule: Schedule) -> list[Endpoint]:
    """The schedule's enabled endpoints (of enabled providers); none chosen = every enabled one."""
    chosen = list(schedule.endpoints.all())
    if chosen:
        return [e for e in chosen if e.enabled and e.provider.enabled]
    return list(
        Endpoint.objects.filter(enabled=True, provider__enabled=True).select_related("provider")
    )


def schedule_workloads(schedule: Schedule) -> list[Workload]:
    return [w for w in schedule.workloads.all() if w.enabled]


@dataclass(slots=True)
class Plan:
    """Runs to create at one tick: the due ones, and missed older slots recorded as skipped."""

    due: list[Run]
    skipped: list[Run]


def plan(
    schedule: Schedule,
    *,
    now: datetime,
    endpoints: Sequence[Endpoint],
    workloads: Sequence[Workload],
) -> Plan:
    """The runs `schedule` owes at `now`.

    Per endpoint × workload only the latest slot at or before `now` is due (and never one from
    before the schedule or the endpoint existed). Older slots since the series' last run, within
    the lookback window, are recorded as skipped: a restart after downtime never replays a storm
    of runs. A series without a run in the window just starts; nothing is recorded as missed.
    """
    result = Plan(due=[], skipped=[])
    newest = latest_slot(schedule, now)
    if newest is None or not endpoints or not workloads:
        return result
    window = timedelta(hours=settings.TOKSPEED_MISSED_SLOTS_LOOKBACK_H)
    # A series that ran within a week counts as running (so a gap means downtime).
    since = now - max(window * 7, timedelta(days=7))
    last = _last_slots(schedule, endpoints=endpoints, workloads=workloads, since=since, now=now)
    for endpoint in endpoints:
        for workload in workloads:
            previous = last.get((endpoint.id, workload.id))
            floor = max(schedule.created_at, endpoint.created_at, previous or since)
            if newest <= floor:
                continue
            missed = []
            if previous is not None:
                recent = slots_between(schedule, max(floor, now - window), newest)[:-1]
                missed = recent[-MAX_SKIPPED_PER_SERIES:]
            for slot in [*missed, newest]:
                run = _run(schedule, endpoint, workload, slot, RunStatus.QUEUED)
                if _catch_up(run, now=now, latest=slot == newest):
                    result.due.append(run)
                else:
                    result.skipped.append(run)
    return result


def _catch_up(run: Run, *, now: datetime, latest: bool) -> bool:
    """Whether a slot is run: the latest always, an older missed one within the lateness
    budget. A run queued late says so."""
    budget = settings.TOKSPEED_RUN_LATE_S
    late = (now - run.slot).total_seconds()
    if late > budget and not latest:
        run.status, run.failure_reason = RunStatus.SKIPPED, PAST_BUDGET_REASON.format(budget=budget)
        return False
    if late > LATE_NOTE_S:
        note = CAUGHT_UP_NOTE if late <= budget else LATEST_NOTE
        run.note = note.format(late=late, budget=budget)
    return True


def _last_slots(
    schedule: Schedule,
    *,
    endpoints: Sequence[Endpoint],
    workloads: Sequence[Workload],
    since: datetime,
    now: datetime,
) -> dict[tuple[int, int], datetime]:
    """Latest existing slot per (endpoint, workload) at this vantage, whichever schedule made it.

    A confirmation run (alerts/lifecycle/confirm.py) is an extra run between the schedule's
    slots: it never stands for a slot the schedule owes."""
    rows = (
        Run.objects.exclude(origin=RunOrigin.CONFIRMATION)
        .filter(
            vantage_id=schedule.vantage_id,
            endpoint__in=[e.id for e in endpoints],
            workload__in=[w.id for w in workloads],
            slot__gt=since,
            slot__lte=now,
        )
        .values("endpoint_id", "workload_id")
        .annotate(last=Max("slot"))
    )
    return {(row["endpoint_id"], row["workload_id"]): row["last"] for row in rows}


def _run(
    schedule: Schedule, endpoint: Endpoint, workload: Workload, slot: datetime, status: str
) -> Run:
    skipped = status == RunStatus.SKIPPED
    return Run(
        endpoint=endpoint,
        workload=workload,
        vantage_id=schedule.vantage_id,
        schedule=schedule,
        slot=slot,
        status=status,
        failure_reason=SKIPPED_REASON if skipped else "",
        concurrency=workload.concurrency_for(endpoint),
        repetitions=workload.repetitions,
        context_tokens=workload.context_tokens,
        tod_bucket=tod_bucket(slot),
    )
