"""The outbox: every email and every channel post is a Notification row, sent once, none lost.

1. dispatch (alerts/delivery/dispatch.py): what happened (alert events, changes of advice)
   is claimed with a conditional UPDATE and becomes rows in the same transaction.
2. deliver: claim each row with a lease (claimed_until, a conditional UPDATE), send it, mark it
   sent. Another sender skips it while the lease runs; a sender that died mid-send leaves it to
   be retried when the lease expires. A failure (SMTP, a channel answering 5xx or hanging past
   CHANNELS_TIMEOUT_S) pushes claimed_until out with exponential backoff capped at an hour, for
   ALERTS_SMTP_GIVE_UP_H hours from the row's creation (two days by default: a weekend-long
   outage loses nothing); a permanent refusal (SMTP 5xx for the recipient or the message, a
   channel whose address is gone) gives up at once. A channel that failed
   CHANNELS_BROKEN_AFTER attempts in a row is marked broken (alerts/delivery/channels/health.py).
"""

from __future__ import annotations

import logging
import smtplib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import get_connection
from django.db.models import F, Q
from django.utils import timezone

from alerts.delivery import emails
from alerts.delivery.channels import health
from alerts.delivery.channels.send import ChannelFailed, post
from alerts.delivery.dispatch import dispatch, dispatch_advice
from alerts.models import Notification
from benchmarks.resilience import retry_db

__all__ = ["backlog", "deliver", "deliver_one", "dispatch", "dispatch_advice"]

log = logging.getLogger(__name__)

BACKOFF_FIRST_S = 30
BACKOFF_MAX_S = 3600


@dataclass
class DeliveryReport:
    sent: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)  # gave up
    retry_in_s: float | None = None  # soonest retry of a transient failure

    def retry_after(self, seconds: float) -> None:
        self.retry_in_s = seconds if self.retry_in_s is None else min(self.retry_in_s, seconds)


def _claimable(now: datetime) -> Q:
    return Q(sent_at__isnull=True, failed_at__isnull=True) & (
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    )


def _permanent(error: Exception) -> bool:
    if isinstance(error, ChannelFailed):
        return error.permanent
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return True
    return isinstance(error, smtplib.SMTPDataError) and 500 <= error.smtp_code < 600


class Mailer:
    """One SMTP connection per pass, opened on the first email (a pass of channel posts only
    never connects), reopened after a failure rather than reusing a broken session."""

    def __init__(self) -> None:
        self.connection = None

    def send(self, notification: Notification) -> str:
        if self.connection is None:
            self.connection = get_connection(fail_silently=False)
        message = emails.build(notification, connection=self.connection)
        try:
            message.send()
        except (smtplib.SMTPException, OSError):
            self.close()
            raise
        return message.subject

    def close(self) -> None:
        if self.connection is None:
            return
        try:
            self.connection.close()
        except (smtplib.SMTPException, OSError):
            pass  # the messages are sent (or recorded as not sent) already
        self.connection = None


def deliver(*, limit: int = 200) -> DeliveryReport:
    """Send the Notifications that are due; never raises for a failed send."""
    report = DeliveryReport()
    now = timezone.now()
    due = list(
        Notification.objects.filter(_claimable(now))
        .order_by("created_at", "id")
        .values_list("id", flat=True)[:limit]
    )
    mailer = Mailer()
    try:
        for notification_id in due:
            _deliver_one(notification_id, mailer, report)
    finally:
        mailer.close()
    return report


def deliver_one(notification_id: int) -> DeliveryReport:
    """Send one row now (the "send test notification" button)."""
    report = DeliveryReport()
    mailer = Mailer()
    try:
        _deliver_one(notification_id, mailer, report)
    finally:
        mailer.close()
    return report


def _claim(notification_id: int) -> uuid.UUID | None:
    now = timezone.now()
    token = uuid.uuid4()
    lease = timedelta(seconds=settings.ALERTS_SEND_LEASE_S)
    won = Notification.objects.filter(_claimable(now), id=notification_id).update(
        claimed_until=now + lease, claim_token=token, attempts=F("attempts") + 1
    )
    return token if won else None


def _deliver_one(notification_id: int, mailer: Mailer, report: DeliveryReport) -> None:
    token = _claim(notification_id)
    if token is None:
        return  # another sender has it
    notification = Notification.objects.select_related("channel", "advice_change").get(
        id=notification_id
    )
    mine = Notification.objects.filter(id=notification_id, claim_token=token)
    send: Callable[[Notification], str] = post if notification.channel_id else mailer.send
    try:
        subject = send(notification)
    except (smtplib.SMTPException, OSError, ChannelFailed) as error:
        _failed(notification, mine, error, report, permanent=_permanent(error))
        return
    except Exception as error:  # a rendering bug must not hold back every other message
        log.exception("outbox message %s could not be built", notification_id)
        _failed(notification, mine, error, report, permanent=False)
        return
    # Sent: record it even across a database blip, or the lease would expire and send it again.
    retry_db(
        lambda: mine.update(sent_at=timezone.now(), subject=subject[:300], last_error=""),
        what=f"recording outbox message {notification_id} as sent",
    )
    if notification.channel_id:
        health.succeeded(notification.channel_id)
    report.sent.append(notification_id)


def _failed(notification, mine, error: Exception, report: DeliveryReport, *, permanent: bool):
    """Record a failed attempt: give up, or hold the message back with exponential backoff."""
    # A channel's failure is already in words (send.py); an SMTP error keeps its class's name.
    named = not isinstance(error, ChannelFailed)
    reason = (f"{type(error).__name__}: {error}" if named else str(error))[:2000]
    attempts = notification.attempts
    where = f"channel {notification.channel_id}" if notification.channel_id else notification.email
    if notification.channel_id:
        health.failed(notification.channel_id, reason)
    give_up_at = notification.created_at + timedelta(hours=settings.ALERTS_SMTP_GIVE_UP_H)
    if permanent or timezone.now() >= give_up_at:
        mine.update(failed_at=timezone.now(), last_error=reason, claimed_until=None)
        report.failed.append(notification.id)
        log.error("outbox message %s to %s failed for good: %s", notification.id, where, reason)
        return
    backoff = min(BACKOFF_FIRST_S * 2 ** (attempts - 1), BACKOFF_MAX_S)
    mine.update(claimed_until=timezone.now() + timedelta(seconds=backoff), last_error=reason)
    report.retry_after(backoff)
    log.warning(
        "outbox message %s to %s failed (attempt %s), retry in %ss: %s",
        notification.id,
        where,
        attempts,
        backoff,
        reason,
    )


@dataclass(frozen=True, slots=True)
class Backlog:
    """Messages not yet sent (and not given up): how many, since when, and the last error."""

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
