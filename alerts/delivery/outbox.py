"""The email outbox: events become emails, each sent once, none lost.

1. dispatch: claim unsent events with a conditional UPDATE (healthchecks' Flip pattern:
   `... WHERE dispatched_at IS NULL`, which only one process can win) and, in the same
   transaction, create one Notification per recipient per evaluation round. A crash before
   the commit leaves the events unclaimed; after it, the Notifications exist.
2. deliver: claim each Notification with a lease (claimed_until), send it, mark it sent.
   Another sender skips it while the lease runs; a sender that died mid-send leaves it to be
   retried when the lease expires. SMTP failures push claimed_until out with exponential
   backoff capped at an hour, for ALERTS_SMTP_GIVE_UP_H hours from the email's creation (two
   days by default: a weekend-long SMTP outage loses nothing); a permanent refusal (5xx for the
   recipient or the message) gives up at once.
"""

from __future__ import annotations

import logging
import smtplib
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import get_connection
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from alerts.delivery import emails
from alerts.delivery.recipients import Audience
from alerts.models import AlertEvent, Delivery, Notification
from benchmarks.resilience import retry_db

log = logging.getLogger(__name__)

BATCH = 500
BACKOFF_FIRST_S = 30
BACKOFF_MAX_S = 3600


@dataclass
class DeliveryReport:
    sent: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)  # gave up
    retry_in_s: float | None = None  # soonest retry of a transient failure

    def retry_after(self, seconds: float) -> None:
        self.retry_in_s = seconds if self.retry_in_s is None else min(self.retry_in_s, seconds)


def dispatch(delivery: str = Delivery.IMMEDIATE, *, now: datetime | None = None) -> list[int]:
    """Claim pending events and create their Notifications; returns the new Notification ids."""
    now = now or timezone.now()
    stamp = "dispatched_at" if delivery == Delivery.IMMEDIATE else "digested_at"
    pending = {f"{stamp}__isnull": True}
    created: list[int] = []
    with transaction.atomic():
        candidates = list(
            AlertEvent.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(created_at__lte=now, **pending)
            .select_related("alert__endpoint__provider", "alert__workload", "alert__vantage")
            .order_by("created_at", "id")[:BATCH]
        )
        claimed = [
            event
            for event in candidates
            if AlertEvent.objects.filter(id=event.id, **pending).update(**{stamp: now}) == 1
        ]
        if not claimed:
            return created
        rounds: dict[object, list[AlertEvent]] = defaultdict(list)
        for event in claimed:
            # One email per recipient per evaluation round (the digest: per day).
            key = "digest" if delivery == Delivery.DIGEST else (event.evaluation_id or event.id)
            rounds[key].append(event)
        audience = Audience()
        for events in rounds.values():
            for email, theirs in audience.group(events, delivery=delivery).items():
                notification = Notification.objects.create(email=email, delivery=delivery)
                notification.events.set(theirs)
                created.append(notification.id)
    return created


def _claimable(now: datetime) -> Q:
    return Q(sent_at__isnull=True, failed_at__isnull=True) & (
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    )


def _permanent(error: Exception) -> bool:
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return True
    return isinstance(error, smtplib.SMTPDataError) and 500 <= error.smtp_code < 600


def deliver(*, limit: int = 200) -> DeliveryReport:
    """Send the Notifications that are due; never raises for an SMTP failure."""
    report = DeliveryReport()
    now = timezone.now()
    due = list(
        Notification.objects.filter(_claimable(now))
        .order_by("created_at", "id")
        .values_list("id", flat=True)[:limit]
    )
    if not due:
        return report
    connection = get_connection(fail_silently=False)
    try:
        for notification_id in due:
            _deliver_one(notification_id, connection, report)
    finally:
        try:
            connection.close()
        except (smtplib.SMTPException, OSError):
            pass  # the messages are sent (or recorded as not sent) already
    return report


def _deliver_one(notification_id: int, connection, report: DeliveryReport) -> None:
    now = timezone.now()
    token = uuid.uuid4()
    lease = timedelta(seconds=settings.ALERTS_SEND_LEASE_S)
    won = Notification.objects.filter(_claimable(now), id=notification_id).update(
        claimed_until=now + lease, claim_token=token, attempts=F("attempts") + 1
    )
    if not won:
        return  # another sender has it
    notification = Notification.objects.get(id=notification_id)
    mine = Notification.objects.filter(id=notification_id, claim_token=token)
    try:
        message = emails.build(notification, connection=connection)
    except Exception as error:  # a rendering bug must not hold back every other email
        log.exception("alert email %s could not be rendered", notification_id)
        _failed(notification, mine, error, report, permanent=False)
        return
    try:
        message.send()
    except (smtplib.SMTPException, OSError) as error:
        connection.close()  # the next message reconnects rather than reuse a broken session
        _failed(notification, mine, error, report, permanent=_permanent(error))
        return
    # Sent: record it even across a database blip, or the lease would expire and send it again.
    retry_db(
        lambda: mine.update(sent_at=timezone.now(), subject=message.subject[:300], last_error=""),
        what=f"recording alert email {notification_id} as sent",
    )
    report.sent.append(notification_id)


def _failed(notification, mine, error: Exception, report: DeliveryReport, *, permanent: bool):
    """Record a failed attempt: give up, or hold the email back with exponential backoff."""
    reason = f"{type(error).__name__}: {error}"[:2000]
    attempts = notification.attempts
    give_up_at = notification.created_at + timedelta(hours=settings.ALERTS_SMTP_GIVE_UP_H)
    if permanent or timezone.now() >= give_up_at:
        mine.update(failed_at=timezone.now(), last_error=reason, claimed_until=None)
        report.failed.append(notification.id)
        log.error(
            "alert email %s to %s failed for good: %s", notification.id, notification.email, reason
        )
        return
    backoff = min(BACKOFF_FIRST_S * 2 ** (attempts - 1), BACKOFF_MAX_S)
    mine.update(claimed_until=timezone.now() + timedelta(seconds=backoff), last_error=reason)
    report.retry_after(backoff)
    log.warning(
        "alert email %s to %s failed (attempt %s), retry in %ss: %s",
        notification.id,
        notification.email,
        attempts,
        backoff,
        reason,
    )


@dataclass(frozen=True, slots=True)
class Backlog:
    """Emails not yet sent (and not given up): how many, since when, and the last SMTP error."""

    count: int
    oldest: datetime | None
    last_error: str

    def age_s(self, now: datetime) -> float:
        return (now - self.oldest).total_seconds() if self.oldest else 0.0


def backlog() -> Backlog:
    unsent = Notification.objects.filter(sent_at__isnull=True, failed_at__isnull=True)
    count = unsent.count()
    if not count:
        return Backlog(0, None, "")
    oldest = unsent.order_by("created_at").values_list("created_at", flat=True).first()
    failing = unsent.exclude(last_error="").order_by("-claimed_until")
    last_error = failing.values_list("last_error", flat=True).first()
    return Backlog(count, oldest, (last_error or "")[:300])
