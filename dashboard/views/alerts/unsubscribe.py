"""Unsubscribing from an email link: no login, a signed token names the address.

GET shows a button (mail scanners open links; they must not unsubscribe anyone); POST
unsubscribes, which is also what a mail client's one-click unsubscribe sends (RFC 8058), hence
no CSRF token: the signed token is the proof.
"""

from __future__ import annotations

from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from alerts.delivery.tokens import LinkExpired, email_from_token
from alerts.models import EmailOptOut, Subscription


@csrf_exempt
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    try:
        email = email_from_token(token)
    except LinkExpired:
        return render(request, "alerts/unsubscribe.html", {"expired": True}, status=400)
    if email is None:
        return render(request, "alerts/unsubscribe.html", {"invalid": True}, status=400)
    if request.method == "POST":
        with transaction.atomic():
            EmailOptOut.objects.get_or_create(email=email)
            Subscription.objects.filter(email__iexact=email).update(active=False)
        return render(request, "alerts/unsubscribe.html", {"email": email, "done": True})
    return render(request, "alerts/unsubscribe.html", {"email": email, "token": token})
