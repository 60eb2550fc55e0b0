"""The tick: create due runs, claim them with a conditional UPDATE, enqueue each exactly once.

Two ticks at once (or a tick racing `run_now`) never create or enqueue the same run: the unique
key (endpoint, workload, vantage, slot) makes the inserts idempotent, and the claim
`UPDATE ... SET enqueue_token = <mine> WHERE enqueued_at IS NULL` lets one tick own each row.

A published message can still be lost (a Redis restart without persistence). A run still
queued TOKSPEED_RUN_REPUBLISH_S after its publish is claimed and published again; a duplicate
is harmless because a worker claims the run itself before executing it. After
TOKSPEED_RUN_MAX_PUBLISHES tries the run is failed with a reason.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from providers.models import Endpoint
from tokspeed.celery import app as celery_app

from .buckets import tod_bucket
from .finish import finish_run
from .models import Pulse, Run, RunOrigin, RunStatus, Schedule, Vantage, Workload
from .pulse import beat
from .schedules import plan, schedule_endpoints, schedule_workloads
from .selectors import window_figures_write as window_figures
from .selectors.materialized_write import lock

log = logging.getLogger(__name__)

EXECUTE_RUN = "benchmarks.tasks.execute_run"
BATCH = 500


@dataclass(slots=True)
class TickReport:
    due: int = 0  # due runs planned (a row another tick inserted first counts too)
    skipped: int = 0
    enqueued: list[int] = field(default_factory=list)
    stale: int = 0
    errors: list[str] = field(default_factory=list)


def tick(*, now: datetime | None = None) -> TickReport:
    """One beat: fail stale runs, create due runs of every enabled schedule, enqueue them."""
    now = now or timezone.now()
    beat(Pulse.TICK, kind=Pulse.TICK)
    report = TickReport(stale=fail_stale_runs(now=now) + fail_unpublished_runs(now=now))
    schedules = (
        Schedule.objects.filter(enabled=True)
        .select_related("vantage")
        .prefetch_related("workloads", "endpoints__provider")
    )
    for schedule in schedules:
        try:
            owed = plan(
                schedule,
                now=now,
                endpoints=schedule_endpoints(schedule),
                workloads=schedule_workloads(schedule),
            )
        except Exception as exc:  # one broken schedule must not stop the others
            log.exception("schedule %s could not be planned", schedule.pk)
            report.errors.append(f"{schedule}: {exc}")
            continue
        # ignore_conflicts: a row another tick (or run_now) already inserted stays as it is.
        Run.objects.bulk_create(owed.due, batch_size=BATCH, ignore_conflicts=True)
        Run.objects.bulk_create(owed.skipped, batch_size=BATCH, ignore_conflicts=True)
        report.due += len(owed.due)
        report.skipped += len(owed.skipped)
    report.enqueued = claim_and_enqueue(now=now)
    return report


def claim_and_enqueue(*, now: datetime, run_ids: list[int] | None = None) -> list[int]:
    """Claim queued runs nobody enqueued yet (optionally only `run_ids`) and enqueue them.

    The UPDATE is the claim: a concurrent claimer re-reads each row after the lock and finds
    enqueued_at set, so each run is sent once. Messages leave on commit, never before.
    """
    token = uuid.uuid4()
    if run_ids is not None:
        unclaimed = Run.objects.filter(
            status=RunStatus.QUEUED, enqueued_at__isnull=True, id__in=run_ids
        )
    else:
        # Never published, or published so long ago that the message must have been lost.
        lost = now - timedelta(seconds=settings.TOKSPEED_RUN_REPUBLISH_S)
        unclaimed = Run.objects.filter(
            Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=lost),
            status=RunStatus.QUEUED,
            slot__lte=now,
            publishes__lt=settings.TOKSPEED_RUN_MAX_PUBLISHES,
        )
    with transaction.atomic():
        unclaimed.update(enqueued_at=now, enqueue_token=token, publishes=F("publishes") + 1)
        mine = list(
            Run.objects.filter(enqueue_token=token)
            .select_related("vantage")
            .only("id", "repetitions", "vantage__queue")
        )
        batch = [(run.id, run.vantage.queue, run.repetitions) for run in mine]
        transaction.on_commit(partial(_send_all, batch))
    return [run.id for run in mine]


def time_limits(repetitions: int) -> tuple[float, float]:
    """(soft, hard) task time limits in seconds: a backstop behind every request's deadline."""
    per_round = settings.TOKSPEED_DEADLINE_S + settings.TOKSPEED_CONNECT_TIMEOUT_S
    soft = max(repetitions, 1) * per_round + 120
    return soft, soft + 60


def _send_all(batch: list[tuple[int, str, int]]) -> None:
    """Publish execute_run for each (run id, queue, repetitions), over one broker connection.

    If the broker fails, the claims of the runs not sent are released: the next tick retries.
    """
    unsent = list(batch)
    try:
        with celery_app.producer_or_acquire() as producer:
            while unsent:
                run_id, queue, repetitions = unsent[0]
                soft, hard = time_limits(repetitions)
                celery_app.send_task(
                    EXECUTE_RUN,
                    args=[run_id],
                    queue=queue,
                    soft_time_limit=soft,
                    time_limit=hard,
                    producer=producer,
                )
                unsent.pop(0)
    except Exception:
        log.exception("could not enqueue %d runs; the next tick tries again", len(unsent))
        Run.objects.filter(id__in=[run_id for run_id, _, _ in unsent]).filter(
            status=RunStatus.QUEUED
        ).update(enqueued_at=None, enqueue_token=None)


def queue_run_now(
    *, endpoint: Endpoint, workload: Workload, vantage: Vantage, repetitions: int | None = None
) -> Run:
    """Create a run with slot = now and enqueue it on the vantage's queue (on commit).

    `repetitions` overrides the workload's rounds for this run only.
    """
    now = timezone.now()
    with transaction.atomic():
        run = Run.objects.create(
            endpoint=endpoint,
            workload=workload,
            vantage=vantage,
            slot=now,
            origin=RunOrigin.ON_DEMAND,
            concurrency=workload.concurrency_for(endpoint),
            repetitions=repetitions or workload.repetitions,
            context_tokens=workload.context_tokens,
            tod_bucket=tod_bucket(now),
        )
        claim_and_enqueue(now=now, run_ids=[run.id])
    return run


def fail_stale_runs(*, now: datetime) -> int:
    """Runs silent for too long are failed (running) or skipped (never picked up), with a reason."""
    stale_after = timedelta(seconds=settings.TOKSPEED_RUN_STALE_S)
    silent = Run.objects.filter(status=RunStatus.RUNNING, heartbeat_at__lt=now - stale_after)
    count = 0
    for run in silent.select_related("endpoint", "workload", "vantage"):
        if run.samples.count() >= run.expected_samples:
            # Every sample is stored (its worker died while finishing, e.g. in a database
            # outage): it is finished from them like any other run, never failed.
            count += finish_run(run, only_if_heartbeat_before=now - stale_after)
            continue
        minutes = stale_after.total_seconds() / 60
        reason = f"No progress for {minutes:g} min: the worker running it was lost."
        count += finish_run(
            run, status=RunStatus.FAILED, reason=reason, only_if_heartbeat_before=now - stale_after
        )
    waited = timedelta(seconds=settings.TOKSPEED_RUN_QUEUED_TIMEOUT_S)
    forgotten = Run.objects.filter(status=RunStatus.QUEUED, enqueued_at__lt=now - waited)
    for run in forgotten.select_related("vantage").only("id", "vantage__queue"):
        hours = waited.total_seconds() / 3600
        reason = f"No worker on queue '{run.vantage.queue}' picked it up within {hours:g} h."
        count += Run.objects.filter(id=run.id, status=RunStatus.QUEUED).update(
            status=RunStatus.SKIPPED, failure_reason=reason, finished_at=now
        )
    return count


def fail_unpublished_runs(*, now: datetime) -> int:
    """Fail scheduled runs that used up their publishes without a worker starting them."""
    tries = settings.TOKSPEED_RUN_MAX_PUBLISHES
    lost = now - timedelta(seconds=settings.TOKSPEED_RUN_REPUBLISH_S)
    spent = Run.objects.filter(status=RunStatus.QUEUED, publishes__gte=tries).filter(
        Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=lost)
    )
    count = 0
    fields = ("id", "endpoint_id", "vantage_id", "enqueued_at", "vantage__queue")
    for run in spent.select_related("vantage").only(*fields):
        if run.enqueued_at is None:
            reason = f"Could not be published to the broker ({tries} tries): the broker is down."
        else:
            minutes = tries * settings.TOKSPEED_RUN_REPUBLISH_S / 60
            reason = (
                f"Published {tries} times over {minutes:g} min, and no worker on queue "
                f"'{run.vantage.queue}' started it (workers missing, or messages lost)."
            )
        count += _fail_uncounted(run, reason=reason, now=now)
    return count


def _fail_uncounted(run: Run, *, reason: str, now: datetime) -> int:
    """Fail a run that never started. It counts in an exact window without passing through
    the rollups' writer, so its endpoint's short-window rows go with it (under the lock their
    writers take, so none of them writes rows from before it)."""
    with transaction.atomic():
        lock([run.endpoint_id])
        failed = Run.objects.filter(id=run.id, status=RunStatus.QUEUED).update(
            status=RunStatus.FAILED, failure_reason=reason, finished_at=now
        )
        if failed:
            window_figures.drop_endpoint(run.endpoint_id, run.vantage_id)
    return failed
