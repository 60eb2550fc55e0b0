"""Subscribing an address needs that address's consent.

A subscription to the account's own address starts confirmed; any other address (or one that
used an unsubscribe link) gets an email with a signed link and receives nothing until it is
followed. Only following that link lifts an earlier unsubscribe: saving a subscription never
does, so nobody can re-subscribe someone who opted out.
"""

from __future__ import annotations

from enum import Enum

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from alerts.delivery.recipients import normal
from alerts.delivery.tokens import confirm_token
from alerts.models import EmailOptOut, Subscription
from alerts.pages.presenters import absolute


def needs_confirmation(subscription: Subscription) -> bool:
    user = subscription.user
    own = user is not None and normal(user.email or "") == normal(subscription.email)
    opted_out = EmailOptOut.objects.filter(email=normal(subscription.email)).exists()
    return not own or opted_out


def settle_confirmation(subscription: Subscription, *, address_changed: bool) -> bool:
    """Set confirmed_at for a saved subscription; True when a confirmation email must go out."""
    if subscription.confirmed_at is not None and not address_changed:
        return False
    if needs_confirmation(subscription):
        Subscription.objects.filter(id=subscription.id).update(confirmed_at=None)
        subscription.confirmed_at = None
        return subscription.active
    subscription.confirmed_at = timezone.now()
    Subscription.objects.filter(id=subscription.id).update(confirmed_at=subscription.confirmed_at)
    return False


def confirmation_email(subscription: Subscription) -> EmailMultiAlternatives:
    url = absolute(
        reverse(
            "alerts:subscription_confirm",
            args=[confirm_token(subscription.id, subscription.email)],
        )
    )
    context = {
        "subscription": subscription,
        "url": url,
        "requester": subscription.user,
        "days": settings.ALERTS_CONFIRM_MAX_AGE_DAYS,
    }
    message = EmailMultiAlternatives(
        subject="[tokspeed] Confirm alert emails to this address",
        body=render_to_string("alerts/email/confirm.txt", context),
        to=[subscription.email],
    )
    return message


class Confirmed(Enum):
    DONE = "done"
    ALREADY = "already"
    GONE = "gone"  # deleted, or its address changed since the link was sent


def confirm(subscription_id: int, email: str) -> Confirmed:
    """The address followed its link: the subscription starts, an earlier unsubscribe is lifted."""
    with transaction.atomic():
        subscription = (
            Subscription.objects.select_for_update()
            .filter(id=subscription_id, email__iexact=email)
            .first()
        )
        if subscription is None:
            return Confirmed.GONE
        EmailOptOut.objects.filter(email=normal(email)).delete()
        if subscription.confirmed_at is not None:
            return Confirmed.ALREADY
        subscription.confirmed_at = timezone.now()
        subscription.save(update_fields=["confirmed_at"])
    return Confirmed.DONE
