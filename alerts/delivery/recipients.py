"""Who is emailed about an event, and how (immediately or in the daily digest).

ALERT_EMAILS get every alert immediately; subscribers get the topics, endpoints / providers they
chose (none chosen = all; routing.py), at the severities they chose, immediately or in a daily
digest, once the address has confirmed (alerts/subscriptions.py). Events of
a flapping series (digest_only) reach immediate recipients only through the digest. Addresses
that used an unsubscribe link get nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings

from alerts.delivery.routing import PREFETCH, Choice, wants_change, wants_event
from alerts.models import AdviceChange, AlertEvent, Delivery, EmailOptOut, Subscription


def normal(email: str) -> str:
    """Addresses compare case-insensitively (ALERT_EMAILS, subscriptions, opt-outs)."""
    return email.strip().lower()


class Audience:
    """Subscriptions and opt-outs loaded once per sending pass."""

    def __init__(self) -> None:
        self.opted_out = {normal(e) for e in EmailOptOut.objects.values_list("email", flat=True)}
        self.subscriptions = list(
            Subscription.objects.filter(active=True, confirmed_at__isnull=False).prefetch_related(
                *PREFETCH
            )
        )
        self._choice = {s.id: Choice.of(s) for s in self.subscriptions}

    def matches(self, subscription: Subscription, event: AlertEvent) -> bool:
        return wants_event(subscription, self._choice[subscription.id], event)

    def advice(self, change: AdviceChange) -> set[str]:
        """Addresses told that a profile's advice changed (always at once: it is rare)."""
        emails = {
            normal(s.email)
            for s in self.subscriptions
            if wants_change(s, self._choice[s.id], change)
        }
        return emails - self.opted_out

    def subscribers(self, event: AlertEvent, delivery: str) -> set[str]:
        """Addresses of the subscriptions with this delivery that want the event."""
        return {
            normal(s.email)
            for s in self.subscriptions
            if s.delivery == delivery and self.matches(s, event)
        }

    def immediate(self, event: AlertEvent) -> set[str]:
        if event.digest_only:
            return set()
        emails = {normal(e) for e in settings.ALERT_EMAILS}
        emails |= self.subscribers(event, Delivery.IMMEDIATE)
        return emails - self.opted_out

    def digest(self, event: AlertEvent) -> set[str]:
        emails = self.subscribers(event, Delivery.DIGEST)
        if event.digest_only:  # the only way immediate recipients hear about a flapping series
            emails |= {normal(e) for e in settings.ALERT_EMAILS}
            emails |= self.subscribers(event, Delivery.IMMEDIATE)
        return emails - self.opted_out

    def group(self, events: Iterable[AlertEvent], *, delivery: str) -> dict[str, list[AlertEvent]]:
        """{email: its events, in order} for one email per recipient."""
        pick = self.immediate if delivery == Delivery.IMMEDIATE else self.digest
        by_email: dict[str, list[AlertEvent]] = defaultdict(list)
        for event in events:
            for email in sorted(pick(event)):
                by_email[email].append(event)
        return dict(by_email)


def anyone_told() -> bool:
    """Whether an alert reaches anybody: ALERT_EMAILS, or one confirmed, active subscription."""
    if settings.ALERT_EMAILS:
        return True
    return Subscription.objects.filter(active=True, confirmed_at__isnull=False).exists()
