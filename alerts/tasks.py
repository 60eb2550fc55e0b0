"""Celery tasks: thin interfaces that take IDs, re-fetch, and call one function.

`alerts.evaluate_after_run` is sent by name by the runner when a run ends (benchmarks/finish.py).
All tasks are idempotent (an evaluated run has its Evaluation row; events and emails are claimed
with conditional UPDATEs), so acks_late is safe.
"""

from __future__ import annotations

import logging

from django.conf import settings

from alerts.delivery import advice_changes, outbox
from alerts.lifecycle import changepoints, evaluate
from alerts.models import Delivery
from alerts.monthly import send
from alerts.monthly.month import Month
from benchmarks.resilience import DISCONNECTS
from tokspeed.celery import app

log = logging.getLogger(__name__)
# A database that goes away (restart, failover): the task is retried with capped backoff
# (2, 4 … 300 s, about an hour in all) rather than lost; each task is idempotent. Celery's
# Django fixup drops the broken connection before the retry. alerts.send_pending needs no
# such retry: beat sends a new one every minute.
DB_RETRY = {
    "autoretry_for": DISCONNECTS,
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
}


@app.task(
    name="alerts.evaluate_after_run", acks_late=True, ignore_result=True, max_retries=20, **DB_RETRY
)
def evaluate_after_run(run_id: int) -> None:
    outcome = evaluate.evaluate_after_run(run_id)  # committed when it returns
    if outcome is None or not outcome.changed:
        return
    log.info(
        "run %s: alerts opened %s, resolved %s, escalated %s",
        run_id,
        outcome.opened,
        outcome.resolved,
        outcome.escalated,
    )
    try:
        send_pending.delay_on_commit()
    except Exception:  # the beat's send_pending (every minute) picks the events up anyway
        log.exception("could not enqueue alerts.send_pending")


def _send(task, delivery: str) -> None:
    if delivery == Delivery.IMMEDIATE or task.request.retries == 0:
        # A retried digest only re-sends what was dispatched: one digest a day, not two.
        outbox.dispatch(delivery)
    report = outbox.deliver()
    if report.sent or report.failed:
        log.info("alert emails: %d sent, %d given up", len(report.sent), len(report.failed))
    if report.retry_in_s is not None and task.request.retries < settings.ALERTS_SMTP_MAX_RETRIES:
        # SMTP trouble: try again with backoff (the notification's own claimed_until holds it
        # back from the every-minute sender until then, too).
        raise task.retry(countdown=report.retry_in_s)


@app.task(
    name="alerts.send_pending", bind=True, acks_late=True, ignore_result=True, max_retries=None
)
def send_pending(self) -> None:
    _send(self, Delivery.IMMEDIATE)


@app.task(
    name="alerts.send_digest",
    bind=True,
    acks_late=True,
    ignore_result=True,
    max_retries=None,
    **DB_RETRY,
)
def send_digest(self) -> None:
    _send(self, Delivery.DIGEST)


@app.task(name="alerts.detect_change_points", acks_late=True, ignore_result=True)
def detect_change_points() -> None:
    found = changepoints.detect_all()
    log.info("change points: %d series analysed, %d change points stored", *found)


@app.task(name="alerts.evaluate_advice", acks_late=True, ignore_result=True)
def evaluate_advice() -> None:
    """Every profile's recommendation; a change that held twice goes to subscribers and channels."""
    changes = advice_changes.evaluate_all()
    queued = outbox.dispatch_advice()
    if changes or queued:
        log.info("advice: %d change(s) recorded, %d message(s) queued", len(changes), len(queued))
    outbox.deliver()  # and the every-minute sender retries what fails


@app.task(name="alerts.monthly_report", acks_late=True, ignore_result=True, **DB_RETRY)
def monthly_report() -> None:
    """On the 1st (and the 2nd, in case the 1st was missed or TIME_ZONE is behind UTC): queue
    the last complete month's report for its subscribers and channels, once each
    (alerts/monthly/send.py)."""
    month = Month.last_complete()
    created = send.dispatch_monthly(month)
    if not created:
        return
    log.info("monthly report %s queued for %d recipient(s)", month, len(created))
    try:
        send_pending.delay_on_commit()
    except Exception:  # the beat's send_pending (every minute) sends them anyway
        log.exception("could not enqueue alerts.send_pending")
