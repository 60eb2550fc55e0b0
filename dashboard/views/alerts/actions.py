"""Acting on an alert: a confirmation page (GET, what email links open) and the action (POST).

Login required, and an operator (staff or the "operators" group): a forwarded email, or a
viewer's account, must not let anyone accept a regression as the new normal.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from alerts.lifecycle.actions import ACTIONS, ActionRefused, allowed_actions, perform
from alerts.models import Alert
from alerts.wording import headline

from ...alert_forms import ActionForm
from ...roles import is_operator

EXPLAIN = {
    "acknowledge": "Someone is on it. The alert stays open until the series recovers; "
    "nobody is emailed about this.",
    "accept": "The new level is the new normal: the series' history starts again at the "
    "change, so this step never alerts again. Use it when a provider changed for good.",
    "invalid": "The alert was wrong (for example the probe itself had trouble). It closes, "
    "and the series cannot alert again until it has looked normal once.",
}


@login_required
def alert_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    alert = get_object_or_404(
        Alert.objects.select_related("endpoint__provider", "workload", "vantage"), id=pk
    )
    if not is_operator(request.user):
        return render(
            request,
            "alerts/action.html",
            {"alert": alert, "headline": headline(alert, "opened"), "action": action,
             "label": ACTIONS[action], "refused": True},
            status=403,
        )  # fmt: skip
    form = ActionForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            perform(alert.id, action, user=request.user, note=form.cleaned_data["note"])
        except ActionRefused as refused:
            messages.error(request, str(refused))
        else:
            messages.success(request, f"{ACTIONS[action]}: done.")
        return redirect("alerts:detail", pk=alert.id)
    return render(
        request,
        "alerts/action.html",
        {
            "alert": alert,
            "headline": headline(alert, "opened"),
            "action": action,
            "label": ACTIONS[action],
            "explain": EXPLAIN[action],
            "allowed": action in allowed_actions(alert),
            "form": form,
        },
        status=200,
    )
