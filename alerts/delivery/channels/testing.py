""" "Send test notification": a row in the same outbox, sent at once (so the button shows the
real message the receiver will see, and a failure counts toward the channel's health)."""

from __future__ import annotations

from django.utils import timezone

from alerts.delivery import outbox
from alerts.models import Channel, Delivery, Notification


def send_test(channel: Channel) -> Notification:
    notification = Notification.objects.create(channel=channel, delivery=Delivery.IMMEDIATE)
    outbox.deliver_one(notification.id)
    notification.refresh_from_db()
    if notification.sent_at is None and notification.failed_at is None:
        # A failed test is not retried later: the person who pressed the button saw it fail.
        Notification.objects.filter(id=notification.id).update(failed_at=timezone.now())
    return notification
