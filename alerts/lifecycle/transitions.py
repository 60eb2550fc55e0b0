"""Writing alert transitions: every change of an alert is an AlertEvent row (the outbox).

Called inside the evaluation's transaction, so an alert and its event are stored together or
not at all.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from alerts.models import (
    ACTIVE,
    NOTIFIED_KINDS,
    Alert,
    AlertEvent,
    Evaluation,
    EventKind,
    Segment,
    Status,
)

# The evaluation's numbers an Alert keeps as columns (the API shows them; `details` has the rest).
NUMBERS = (
    "baseline_median",
    "recent_median",
    "shift",
    "ci_low",
    "ci_high",
    "p_value",
    "q_value",
    "n_baseline",
    "n_recent",
    "error_rate",
    "error_categories",
)


def record_event(
    alert: Alert,
    kind: str,
    *,
    evaluation: Evaluation | None = None,
    actor=None,
    note: str = "",
    snapshot: dict | None = None,
) -> AlertEvent:
    """An event of the alert; only opened / escalated / resolved ever email anyone."""
    now = timezone.now()
    notified = kind in NOTIFIED_KINDS
    return AlertEvent.objects.create(
        alert=alert,
        kind=kind,
        evaluation=evaluation,
        actor=actor,
        note=note,
        severity=alert.severity,
        digest_only=alert.digest_only,
        snapshot=snapshot if snapshot is not None else dict(alert.details),
        dispatched_at=None if notified else now,
        digested_at=None if notified else now,
    )


def active_alert(**series) -> Alert | None:
    """The active (open or acknowledged) alert of a series, locked for this transaction."""
    return Alert.objects.select_for_update().filter(status__in=ACTIVE, **series).first()


def active_alerts(metrics: list[str], **series) -> dict[str, Alert]:
    """The active alerts of several metrics of one endpoint × workload × vantage, by metric,
    locked for this transaction: one query."""
    found: dict[str, Alert] = {}
    rows = Alert.objects.select_for_update().filter(status__in=ACTIVE, metric__in=metrics, **series)
    for alert in rows:  # newest first (the model's ordering), as active_alert's first()
        found.setdefault(alert.metric, alert)
    return found


def apply_numbers(alert: Alert, snapshot: dict) -> None:
    for name in NUMBERS:
        if name in snapshot:
            setattr(alert, name, snapshot[name])
    alert.details = snapshot


def open_alert(
    *,
    series: dict,
    kind: str,
    severity: str,
    digest_only: bool,
    snapshot: dict,
    evaluation: Evaluation,
    first_bad_at: datetime | None,
    client_version: str = "",
    frozen_baseline: dict | None = None,
    opened_on: dict | None = None,
) -> Alert:
    alert = Alert(
        kind=kind,
        frozen_baseline=frozen_baseline,
        opened_on=opened_on,
        severity=severity,
        digest_only=digest_only,
        first_bad_at=first_bad_at,
        last_run=evaluation.run,
        client_version=client_version,
        **series,
    )
    apply_numbers(alert, snapshot)
    alert.save()
    record_event(alert, EventKind.OPENED, evaluation=evaluation, snapshot=snapshot)
    return alert


def update_alert(alert: Alert, snapshot: dict, evaluation: Evaluation) -> None:
    """Keep an active alert's numbers current (what its page shows)."""
    apply_numbers(alert, snapshot)
    alert.last_run = evaluation.run
    alert.save()


def escalate_alert(alert: Alert, snapshot: dict, evaluation: Evaluation) -> None:
    alert.severity = "major"
    update_alert(alert, snapshot, evaluation)
    record_event(alert, EventKind.ESCALATED, evaluation=evaluation, snapshot=snapshot)


def resolve_alert(
    alert: Alert, snapshot: dict, evaluation: Evaluation, *, digest_only: bool
) -> None:
    alert.status = Status.RESOLVED
    alert.closed_at = timezone.now()
    alert.digest_only = alert.digest_only or digest_only
    update_alert(alert, snapshot, evaluation)
    record_event(alert, EventKind.RESOLVED, evaluation=evaluation, snapshot=snapshot)


def close_as_new_normal(
    alert: Alert, snapshot: dict, evaluation: Evaluation, *, starts_at: datetime
) -> None:
    """The series stayed at a new level long enough: the alert closes as the new normal and
    the series' history starts again where it opened (a Segment, as "accept as new baseline"
    makes), so it is armed again against that level."""
    alert.status = Status.NEW_NORMAL
    alert.closed_at = timezone.now()
    update_alert(alert, snapshot, evaluation)
    Segment.objects.create(
        endpoint=alert.endpoint,
        workload=alert.workload,
        vantage=alert.vantage,
        metric=alert.metric,
        starts_at=starts_at,
        alert=alert,
    )
    record_event(alert, EventKind.NEW_NORMAL, evaluation=evaluation, snapshot=snapshot)
