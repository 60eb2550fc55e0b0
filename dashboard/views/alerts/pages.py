"""The alerts page (open, acknowledged, history; filters) and one alert's page."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from alerts.delivery import outbox
from alerts.delivery.recipients import anyone_told
from alerts.lifecycle import confirm
from alerts.lifecycle.actions import ACTIONS, allowed_actions
from alerts.models import Alert, Status
from alerts.pages import selectors
from alerts.pages.presenters import present
from dashboard.roles import is_operator
from dashboard.views.access import dashboard_view

from ...alert_forms import AlertFilterForm

PAGE_SIZE = 50


@dashboard_view
def alert_list(request: HttpRequest) -> HttpResponse:
    form = AlertFilterForm(request.GET or None)
    if form.is_bound and not form.is_valid():
        raise ValidationError({name: list(errors) for name, errors in form.errors.items()})
    filters = form.filters() if form.is_bound else {"view": "active"}
    page = Paginator(selectors.alerts(**filters), PAGE_SIZE).get_page(request.GET.get("page"))
    counts = dict(Alert.objects.order_by().values_list("status").annotate(n=Count("id")))
    open_, acknowledged = counts.get(Status.OPEN, 0), counts.get(Status.ACKNOWLEDGED, 0)
    keep = {k: v for k, v in filters.items() if k != "view"}
    return render(
        request,
        "alerts/list.html",
        {
            "form": form if form.is_bound else AlertFilterForm(initial={"view": "active"}),
            "page": page,
            "view": filters["view"],
            "tabs": [
                ("active", "Needs attention", open_ + acknowledged),
                ("open", "Open", open_),
                ("acknowledged", "Acknowledged", acknowledged),
                ("history", "History", None),
            ],
            "keep": keep,
            "backlog": outbox.backlog(),
            "nobody_told": not anyone_told(),
            "give_up_h": f"{settings.ALERTS_SMTP_GIVE_UP_H:g}",
            "baseline_days": settings.ALERTS_BASELINE_DAYS,
            "young": _young_rule(),
            "confirm_budget": confirm.budget(timezone.now()),
            # Before any series has a baseline, "nothing is regressing" would be a false comfort.
            "baseline_wait": (
                selectors.baseline_wait(timezone.now())
                if not page.object_list and filters["view"] != "history" and not keep
                else None
            ),
        },
    )


def _young_rule() -> dict:
    """How much larger a change must be while a series' history is young (docs/alerts.md)."""
    factor = settings.ALERTS_YOUNG_EFFECT_FACTOR
    return {
        "days": settings.ALERTS_YOUNG_DAYS,
        "factor": factor,
        "times": "twice" if factor == 2 else f"{factor:g} times",
    }


@dashboard_view
def alert_detail(request: HttpRequest, pk: int) -> HttpResponse:
    alert = get_object_or_404(
        Alert.objects.select_related("endpoint__provider", "workload", "vantage"), id=pk
    )
    kind = {Status.RESOLVED: "resolved", Status.NEW_NORMAL: "new_normal"}.get(
        alert.status, "opened"
    )
    shown = present(alert, kind, alert.details)
    actions = [(name, ACTIONS[name]) for name in allowed_actions(alert)]
    if not is_operator(request.user):
        actions = []  # a viewer reads; acting needs an operator (dashboard/roles.py)
    return render(
        request,
        "alerts/detail.html",
        {
            "alert": alert,
            "shown": shown,
            "events": alert.events.select_related("actor").order_by("created_at", "id"),
            "actions": actions,
            "blind": selectors.blind_spell(alert, now=timezone.now()),
        },
    )
