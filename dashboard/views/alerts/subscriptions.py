"""Managing one's own alert subscriptions (login required)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from alerts.models import EmailOptOut, Subscription

from ...alert_forms import SubscriptionForm


@login_required
def subscription_list(request: HttpRequest) -> HttpResponse:
    subscriptions = (
        Subscription.objects.filter(user=request.user)
        .prefetch_related("endpoints__provider", "providers")
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
        saved = form.save(commit=False)
        saved.user = request.user
        saved.save()
        form.save_m2m()
        if saved.active:
            # Subscribing again is consent again: lift an earlier unsubscribe of this address.
            EmailOptOut.objects.filter(email=saved.email).delete()
        messages.success(request, "Subscription saved.")
        return redirect("alerts:subscriptions")
    return render(
        request, "alerts/subscription_form.html", {"form": form, "subscription": subscription}
    )


@login_required
@require_POST
def subscription_delete(request: HttpRequest, pk: int) -> HttpResponse:
    get_object_or_404(Subscription, id=pk, user=request.user).delete()
    messages.success(request, "Subscription deleted.")
    return redirect("alerts:subscriptions")
