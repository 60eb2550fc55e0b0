"""Turning what happened into outbox rows (Notification), once.

Alert events are claimed with a conditional UPDATE (healthchecks' Flip pattern:
`... WHERE dispatched_at IS NULL`, which only one process can win) and, in the same transaction,
become one email per recipient per evaluation round and one post per channel per event (the
daily digest: one email per recipient, one post per digest channel). A change of advice is
claimed the same way (`notified_at IS NULL`) and becomes one email per subscriber and one post
per channel (a router push for router channels). A crash before the commit leaves everything
unclaimed; after it, the rows exist and alerts/delivery/outbox.py sends each exactly once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from alerts.delivery.recipients import Audience
from alerts.delivery.routing import PREFETCH, Choice, wants_change, wants_event
from alerts.models import (
    AdviceChange,
    AlertEvent,
    Channel,
    Delivery,
    EventKind,
    Kind,
    Notification,
    Service,
    Severity,
    Topic,
)

BATCH = 500


def dispatch(delivery: str = Delivery.IMMEDIATE, *, now: datetime | None = None) -> list[int]:
    """Claim pending events and create their Notifications; returns the new Notification ids."""
    now = now or timezone.now()
    stamp = "dispatched_at" if delivery == Delivery.IMMEDIATE else "digested_at"
    pending = {f"{stamp}__isnull": True}
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
            return []
        return _emails(claimed, delivery) + _posts(claimed, delivery)


def _emails(claimed: list[AlertEvent], delivery: str) -> list[int]:
    rounds: dict[object, list[AlertEvent]] = defaultdict(list)
    for event in claimed:
        # One email per recipient per evaluation round (the digest: per day).
        key = "digest" if delivery == Delivery.DIGEST else (event.evaluation_id or event.id)
        rounds[key].append(event)
    audience = Audience()
    created = []
    for events in rounds.values():
        for email, theirs in audience.group(events, delivery=delivery).items():
            notification = Notification.objects.create(email=email, delivery=delivery)
            notification.events.set(theirs)
            created.append(notification.id)
    return created


def channels() -> list[tuple[Channel, Choice]]:
    active = Channel.objects.filter(active=True).prefetch_related(*PREFETCH)
    return [(channel, Choice.of(channel)) for channel in active]


def _posts(claimed: list[AlertEvent], delivery: str) -> list[int]:
    created = []
    for channel, choice in channels():
        if channel.service == Service.ROUTER:
            continue
        if delivery == Delivery.DIGEST:
            created += _digest_post(channel, choice, claimed)
            continue
        for event in claimed:
            if event.digest_only or not wants_event(channel, choice, event):
                continue
            if channel.pages and not _pages(channel, event):
                continue
            notification = Notification.objects.create(channel=channel, delivery=delivery)
            notification.events.set([event])
            created.append(notification.id)
    return created


def _digest_post(channel: Channel, choice: Choice, claimed: list[AlertEvent]) -> list[int]:
    if Topic.DIGEST not in channel.topics or channel.pages:
        return []
    theirs = [e for e in claimed if wants_event(channel, choice, e, any_topic=True)]
    if not theirs:
        return []
    notification = Notification.objects.create(channel=channel, delivery=Delivery.DIGEST)
    notification.events.set(theirs)
    return [notification.id]


def _pages(channel: Channel, event: AlertEvent) -> bool:
    """Paging services: an outage or a major regression triggers (an escalation to major too);
    its resolution resolves, only where it triggered. Acknowledging is not notified at all."""
    if event.kind == EventKind.RESOLVED:
        return Notification.objects.filter(channel=channel, events__alert=event.alert_id).exists()
    alert = event.alert
    return alert.kind == Kind.OUTAGE or (
        alert.kind == Kind.REGRESSION and event.severity == Severity.MAJOR
    )


def dispatch_advice(*, now: datetime | None = None) -> list[int]:
    """Claim unsent changes of advice and create their Notifications; returns their ids."""
    now = now or timezone.now()
    created: list[int] = []
    with transaction.atomic():
        pending = AdviceChange.objects.select_for_update(skip_locked=True).filter(
            notified_at__isnull=True
        )
        for change in pending.select_related("profile").order_by("created_at", "id")[:BATCH]:
            if not AdviceChange.objects.filter(id=change.id, notified_at__isnull=True).update(
                notified_at=now
            ):
                continue
            created += _advice_rows(change, Audience(), channels())
    return created


def _advice_rows(
    change: AdviceChange, audience: Audience, routes: Iterable[tuple[Channel, Choice]]
) -> list[int]:
    created = []
    for email in sorted(audience.advice(change)):
        created.append(
            Notification.objects.create(
                email=email, delivery=Delivery.IMMEDIATE, advice_change=change
            ).id
        )
    for channel, choice in routes:
        if channel.pages or not wants_change(channel, choice, change):
            continue
        created.append(
            Notification.objects.create(
                channel=channel, delivery=Delivery.IMMEDIATE, advice_change=change
            ).id
        )
    return created
