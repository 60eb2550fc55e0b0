"""A channel that keeps failing is marked broken and shown (as healthchecks does); one success
mends it. Errors are stored as the outbox wrote them, which never contains the address."""

from __future__ import annotations

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from alerts.models import Channel


def succeeded(channel_id: int) -> None:
    Channel.objects.filter(id=channel_id).update(
        failures=0, broken_at=None, last_error="", last_sent_at=timezone.now()
    )


def failed(channel_id: int, reason: str) -> None:
    Channel.objects.filter(id=channel_id).update(
        failures=F("failures") + 1, last_error=reason[:300]
    )
    Channel.objects.filter(
        id=channel_id, failures__gte=settings.CHANNELS_BROKEN_AFTER, broken_at__isnull=True
    ).update(broken_at=timezone.now())
