"""Celery tasks: thin interfaces that take IDs and call one function.

`tick` runs on the central queue ("tokspeed") every minute (beat); `execute_run` runs on the
queue of the run's vantage. Both are idempotent (unique keys in the database), so acks_late is
safe: a message redelivered after a worker died finds its rows and does nothing twice.
"""

from __future__ import annotations

import gc
import logging

from celery.signals import task_postrun, worker_ready, worker_shutdown
from django.conf import settings
from django.db import reset_queries
from django.utils import timezone

from tokspeed.celery import app

from . import dispatch, partitions, pulse, retention, runner
from .resilience import DISCONNECTS, retry_db
from .rollups import windows
from .selectors import materialized_write, window_figures_write

log = logging.getLogger(__name__)
_pulse_stops = []


@worker_ready.connect
def _start_pulse(sender, **_: object) -> None:
    queues = [queue.name for queue in sender.app.amqp.queues.consume_from.values()]
    _pulse_stops.append(pulse.start_worker_pulse(sender.hostname, queues))


@task_postrun.connect
def forget_queries(**_: object) -> None:
    """After each task: forget Django's query log and collect the task's garbage.

    With DEBUG on (`make run`), Django keeps every query's SQL (up to 9,000) until a *web*
    request resets it; a worker never serves one, so each pool process grew by the SQL of
    every run it executed (tracemalloc: bench/worker_memory.py).

    A run leaves reference cycles behind (asyncio tasks, streams, their exceptions); a burst
    runs with the collector's objects frozen (measure/burst.py), and the full collection that
    would free them comes only after hundreds of runs, by when the process's memory has grown
    to hold them all: ~60 KiB a task of RSS that tracemalloc did not show as live
    (bench/worker_memory.py --celery). A full collection here, between tasks and never while
    a clock runs, keeps a pool process flat without recycling it."""
    reset_queries()
    gc.collect()


@worker_shutdown.connect
def _stop_pulse(**_: object) -> None:
    for stop in _pulse_stops:
        stop.set()


@app.task(name="benchmarks.tasks.tick", ignore_result=True)
def tick() -> None:
    # Idempotent, so retried across a database outage for up to the lateness budget: a slot
    # whose tick met the outage is queued once the database is back (its run notes how late).
    report = retry_db(dispatch.tick, what="tick", budget_s=settings.TOKSPEED_RUN_LATE_S)
    if report.enqueued or report.skipped or report.stale or report.errors:
        log.info(
            "tick: %d runs enqueued, %d missed slots skipped, %d stale runs ended, errors: %s",
            len(report.enqueued),
            report.skipped,
            report.stale,
            report.errors or "none",
        )


@app.task(name="benchmarks.tasks.refresh_window_rollups", ignore_result=True)
def refresh_window_rollups() -> None:
    """Pre-merge the long windows through yesterday once a UTC day (a no-op once done)."""
    written = windows.refresh()
    if written:
        log.info("window rollups refreshed: %d rows", written)
    # Then the day's materialized board, merged from them (a no-op once written).
    figures = materialized_write.refresh()
    if figures:
        log.info("board figures written: %d rows", figures)


@app.task(name="benchmarks.tasks.refresh_window_figures", ignore_result=True)
def refresh_window_figures() -> None:
    """Rewrite the short windows' board rows that stopped being exact (their oldest run left
    the window) or are missing, so that reads rarely compute an endpoint themselves."""
    written = window_figures_write.refresh()
    if written:
        log.info("window figures rewritten: %d rows", written)


@app.task(
    name="benchmarks.tasks.execute_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,  # bounded: a busy run ends, or goes silent and is taken over or failed
    ignore_result=True,
)
def execute_run(self, run_id: int) -> None:
    try:
        outcome = runner.execute(run_id, worker=self.request.hostname or "")
    except DISCONNECTS:
        # The database stayed away past TOKSPEED_DB_OUTAGE_S: resume the run (its stored
        # samples kept) once its lease has run out, instead of leaving it to look lost.
        log.warning("run %s: database unreachable; resuming it later", run_id)
        raise self.retry(countdown=settings.TOKSPEED_RUN_LEASE_S) from None
    if outcome == runner.BUSY:
        # Another worker holds a fresh lease (e.g. a broker redelivered a long run): check
        # again once that lease could have expired.
        raise self.retry(countdown=settings.TOKSPEED_RUN_LEASE_S)
    if outcome == runner.WAIT:
        # Another run of this endpoint (another workload of the same slot) is in flight.
        raise self.retry(countdown=settings.TOKSPEED_RUN_BUSY_RETRY_S)
    log.info("run %s: %s", run_id, outcome)


@app.task(name="benchmarks.tasks.expire_samples", ignore_result=True)
def expire_samples() -> None:
    report = retention.expire_samples(now=timezone.now())
    if report.deleted or report.dropped_partitions:
        log.info(
            "retention: %d samples before %s deleted in %d batches; partitions dropped: %s",
            report.deleted,
            report.cutoff,
            report.batches,
            ", ".join(report.dropped_partitions) or "none",
        )


@app.task(name="benchmarks.tasks.ensure_sample_partitions", ignore_result=True)
def ensure_sample_partitions() -> None:
    created = partitions.ensure_months(now=timezone.now())
    if created:
        log.info("samples: partitions created for %s", ", ".join(created))
