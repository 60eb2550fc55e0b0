"""Managing one's own alert subscriptions (login required), and confirming an address (a signed
link emailed to it: no login, the link is the proof)."""

from __future__ import annotations

import logging
import smtplib
import time

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from alerts.delivery.subscriptions import (
    Confirmed,
    confirm,
    confirmation_email,
    settle_confirmation,
)
from alerts.delivery.tokens import LinkExpired, subscription_from_token
from alerts.models import EmailOptOut, Subscription

from ...alert_forms import SubscriptionForm

log = logging.getLogger(__name__)


@login_required
def subscription_list(request: HttpRequest) -> HttpResponse:
    subscriptions = (
        Subscription.objects.filter(user=request.user)
        .prefetch_related("endpoints__provider", "providers", "profiles")
        .order_by("created_at")
    )
    opted_out = set(
        EmailOptOut.objects.filter(
            email__in=[s.email for s in subscriptions] + [request.user.email.lower()]
        ).values_list("email", flat=True)
    )
    return render(
        request,
        "alerts/subscriptions.html",
        {"subscriptions": subscriptions, "opted_out": opted_out},
    )


@login_required
def subscription_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    subscription = None
    if pk is not None:
        subscription = get_object_or_404(Subscription, id=pk, user=request.user)
    initial = {"email": request.user.email} if subscription is None else None
    data = request.POST if request.method == "POST" else None
    form = SubscriptionForm(data, instance=subscription, initial=initial)
    if request.method == "POST" and form.is_valid():
        address_changed = subscription is None or "email" in form.changed_data
        saved = form.save(commit=False)
        saved.user = request.user
        saved.save()
        form.save_m2m()
        # Never lifts an unsubscribe: only the address itself does, through the emailed link.
        if settle_confirmation(saved, address_changed=address_changed):
            _send_confirmation(request, saved)
        else:
            messages.success(request, "Subscription saved.")
        return redirect("alerts:subscriptions")
    return render(
        request, "alerts/subscription_form.html", {"form": form, "subscription": subscription}
    )


def _send_confirmation(request: HttpRequest, subscription: Subscription) -> None:
    try:
        confirmation_email(subscription).send()
    except (OSError, smtplib.SMTPException):
        log.warning(
            "confirmation email to subscription %s not sent", subscription.id, exc_info=True
        )
        messages.error(
            request,
            f"Saved, but the confirmation email to {subscription.email} could not be sent; "
            "try “Send the link again” later.",
        )
        return
    messages.success(
        request,
        f"Saved. We emailed {subscription.email} a link to confirm; nothing is sent to that "
        "address until it is followed.",
    )


@login_required
@require_POST
def subscription_resend(request: HttpRequest, pk: int) -> HttpResponse:
    subscription = get_object_or_404(Subscription, id=pk, user=request.user)
    if subscription.confirmed_at is None:
        if _resends_left(subscription.id):
            _send_confirmation(request, subscription)
        else:
            messages.error(
                request,
                f"{RESENDS_PER_HOUR} confirmation emails already went to {subscription.email} "
                "this hour; try again later.",
            )
    return redirect("alerts:subscriptions")


# Confirmation emails one subscription may get per hour (an unverified address is someone
# else's inbox until its owner follows the link).
RESENDS_PER_HOUR = 3


def _resends_left(subscription_id: int) -> bool:
    """Count this resend atomically (cache add + incr: Redis INCR) in the current hour."""
    key = f"alerts-resend:{subscription_id}:{int(time.time() // 3600)}"
    cache.add(key, 0, timeout=3700)
    return cache.incr(key) <= RESENDS_PER_HOUR


def subscription_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows a button (mail scanners open links); POST confirms."""
    try:
        found = subscription_from_token(token)
    except LinkExpired:
        return render(request, "alerts/confirm.html", {"expired": True}, status=400)
    if found is None:
        return render(request, "alerts/confirm.html", {"invalid": True}, status=400)
    subscription_id, email = found
    if request.method == "POST":
        outcome = confirm(subscription_id, email)
        status = 400 if outcome is Confirmed.GONE else 200
        return render(
            request,
            "alerts/confirm.html",
            {"email": email, "outcome": outcome.value},
            status=status,
        )
    return render(request, "alerts/confirm.html", {"email": email, "token": token})


@login_required
@require_POST
def subscription_delete(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(Subscription, id=pk, user=request.user).delete()
    messages.success(request, "Subscription deleted.")
    return redirect("alerts:subscriptions")
