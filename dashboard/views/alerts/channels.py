"""The channels page (/alerts/channels/): where alerts go besides email. Operators add, edit and
test channels; everyone logged in sees them, with the broken ones marked. Addresses are shown
only as hints."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from alerts.channel_forms import ADDRESS_HELP, ChannelForm
from alerts.delivery.channels.testing import send_test
from alerts.models import Channel

from ...roles import is_operator


def _operator(request: HttpRequest) -> None:
    if not is_operator(request.user):
        raise PermissionDenied("Only operators manage channels.")


@login_required
def channel_list(request: HttpRequest) -> HttpResponse:
    channels = Channel.objects.prefetch_related("endpoints__provider", "providers", "profiles")
    return render(
        request,
        "alerts/channels.html",
        {"channels": channels, "operator": is_operator(request.user)},
    )


@login_required
def channel_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    _operator(request)
    channel = get_object_or_404(Channel, id=pk) if pk is not None else None
    data = request.POST if request.method == "POST" else None
    form = ChannelForm(data, instance=channel)
    if request.method == "POST" and form.is_valid():
        saved = form.save(commit=False)
        if channel is None:
            saved.created_by = request.user
        saved.save()
        form.save_m2m()
        messages.success(request, f"Channel “{saved.name}” saved.")
        if form.new_signing_secret:
            return render(
                request,
                "alerts/channel_secret.html",
                {"channel": saved, "signing_secret": form.new_signing_secret},
            )
        return redirect("alerts:channels")
    return render(
        request,
        "alerts/channel_form.html",
        {"form": form, "channel": channel, "address_help": ADDRESS_HELP},
    )


@login_required
@require_POST
def channel_test(request: HttpRequest, pk: int) -> HttpResponse:
    _operator(request)
    channel = get_object_or_404(Channel, id=pk)
    sent = send_test(channel)
    if sent.sent_at:
        messages.success(request, f"Test notification sent to “{channel.name}”.")
    else:
        messages.error(request, f"“{channel.name}” did not take it: {sent.last_error}")
    return redirect("alerts:channels")


@login_required
@require_POST
def channel_delete(request: HttpRequest, pk: int) -> HttpResponse:
    _operator(request)
    get_object_or_404(Channel, id=pk).delete()
    messages.success(request, "Channel deleted.")
    return redirect("alerts:channels")
