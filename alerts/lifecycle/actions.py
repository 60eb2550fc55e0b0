"""What people do to an alert: acknowledge, accept as new baseline, mark invalid.

Each action is an AlertEvent (not emailed: the people acting already know) and leaves the
series' hysteresis in a state that cannot bring the same alert straight back:
- accept as new baseline starts a Segment at the alert's first bad time, so baselines never
  reach back across the step and the step itself stops being a regression;
- mark invalid mutes the series until it has been clear once.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from alerts.lifecycle.transitions import record_event
from alerts.models import (
    ACTIVE,
    Alert,
    EventKind,
    Kind,
    ProbeState,
    Segment,
    SeriesState,
    Status,
)

ACTIONS = {
    "acknowledge": "Acknowledge",
    "accept": "Accept as new baseline",
    "invalid": "Mark invalid",
}


class ActionRefused(Exception):
    """The action does not apply to this alert in its current state (message says why)."""


def allowed_actions(alert: Alert) -> list[str]:
    if alert.status == Status.OPEN:
        actions = ["acknowledge", "accept", "invalid"]
    elif alert.status == Status.ACKNOWLEDGED:
        actions = ["accept", "invalid"]
    else:
        return []
    if alert.kind != Kind.REGRESSION:
        actions.remove("accept")  # an outage or a probe problem is not a new normal
    return actions


def perform(alert_id: int, action: str, *, user, note: str = "") -> Alert:
    """Apply `action` to the alert; raises ActionRefused when it does not apply."""
    if action not in ACTIONS:
        raise ActionRefused(f"Unknown action {action!r}; choose one of: {', '.join(ACTIONS)}.")
    with transaction.atomic():
        alert = Alert.objects.select_for_update().get(id=alert_id)
        if action not in allowed_actions(alert):
            raise ActionRefused(_why_not(alert, action))
        now = timezone.now()
        if action == "acknowledge":
            alert.status = Status.ACKNOWLEDGED
            kind = EventKind.ACKNOWLEDGED
        elif action == "accept":
            alert.status, alert.closed_at = Status.ACCEPTED, now
            kind = EventKind.ACCEPTED
            Segment.objects.create(
                endpoint=alert.endpoint,
                workload=alert.workload,
                vantage=alert.vantage,
                metric=alert.metric,
                starts_at=min(alert.first_bad_at or now, now),
                alert=alert,
                created_by=user,
            )
            _reset_series(alert, muted=False)
        else:
            alert.status, alert.closed_at = Status.INVALID, now
            kind = EventKind.INVALID
            _reset_series(alert, muted=True)
        alert.save()
        record_event(alert, kind, actor=user, note=note)
    return alert


def _reset_series(alert: Alert, *, muted: bool) -> None:
    if alert.kind == Kind.INFRASTRUCTURE:
        ProbeState.objects.filter(vantage=alert.vantage).update(positives=0, clears=0)
        return
    SeriesState.objects.filter(
        endpoint=alert.endpoint, workload=alert.workload, vantage=alert.vantage, metric=alert.metric
    ).update(positives=0, clears=0, muted=muted)


def _why_not(alert: Alert, action: str) -> str:
    if alert.status in ACTIVE and action == "accept":
        return "Only a speed regression can become the new baseline."
    return f"This alert is already {alert.get_status_display().lower()}."
