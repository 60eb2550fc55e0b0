"""What a channel post says: the email's facts, as a title, a Markdown body (apprise formats it
for each service: Slack blocks, a Teams adaptive card, a Discord embed, a PagerDuty summary),
and a JSON document for webhooks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse
from django.utils import timezone

from alerts.delivery.emails import KIND_WORDS
from alerts.models import AlertEvent, Delivery, EventKind, Notification
from alerts.monthly import summary
from alerts.monthly.month import Month
from alerts.monthly.report import build as build_report
from alerts.pages.presenters import Presented, absolute, present

TABLE_ROWS = 6  # the time-of-day table in short


@dataclass
class Message:
    title: str
    body: str  # Markdown
    kind: str  # alert.opened/escalated/resolved, digest, advice.changed, monthly.report, test
    level: str = "info"  # info, success, warning, failure (apprise's notify types)
    document: dict[str, Any] = field(default_factory=dict)  # the webhook's JSON body
    alert_id: int | None = None


def build(notification: Notification) -> Message:
    if notification.advice_change_id:
        message = advice(notification)
    elif notification.report_month:
        message = monthly(notification)
    else:
        events = list(
            notification.events.select_related(
                "alert__endpoint__provider", "alert__workload", "alert__vantage"
            ).order_by("created_at", "id")
        )
        if notification.delivery == Delivery.DIGEST:
            message = digest(events)
        elif events:
            message = alert(events[0])
        else:
            message = test(notification)
    message.document = {
        "type": message.kind,
        "delivery": notification.id,
        "title": message.title,
        "text": message.body,
        "sent_at": timezone.now().isoformat(),
        **message.document,
    }
    return message


def _table(table: dict) -> list[str]:
    if not table["rows"]:
        return []
    lines = [f"*{table['title']}*", " · ".join(table["header"])]
    lines += [" · ".join(str(c) for c in row) for row in table["rows"][:TABLE_ROWS]]
    if len(table["rows"]) > TABLE_ROWS:
        lines.append(f"… {len(table['rows']) - TABLE_ROWS} more rows on the alert page")
    return lines


def _markdown(shown: Presented) -> str:
    lines = [f"**Series:** {shown.series}"]
    lines += [f"**{label}:** {text}" for label, text in shown.facts]
    for table in shown.tables[:1]:  # the time-of-day table (or the last runs), in short
        lines += ["", *_table(table)]
    lines += ["", " · ".join(f"[{label}]({url})" for label, url in shown.links)]
    return "\n".join(lines)


def alert(event: AlertEvent) -> Message:
    shown = present(event.alert, event.kind, event.snapshot)
    words = KIND_WORDS.get(event.kind, event.kind)
    resolved = event.kind == EventKind.RESOLVED
    major = event.severity == "major"
    return Message(
        title=f"{words} ({event.severity}): {shown.headline}",
        body=_markdown(shown),
        kind=f"alert.{event.kind}",
        level="success" if resolved else ("failure" if major else "warning"),
        alert_id=event.alert_id,
        document={
            "alert": _alert_document(event, shown),
            "facts": [{"label": label, "text": text} for label, text in shown.facts],
            "tables": shown.tables,
            "links": [{"label": label, "url": url} for label, url in shown.links],
        },
    )


def _alert_document(event: AlertEvent, shown: Presented) -> dict[str, Any]:
    a = event.alert
    return {
        "id": a.id,
        "event": event.kind,
        "kind": a.kind,
        "metric": a.metric,
        "status": a.status,
        "severity": event.severity,
        "headline": shown.headline,
        "series": shown.series,
        "endpoint": a.endpoint.slug if a.endpoint else None,
        "provider": a.endpoint.provider.slug if a.endpoint else None,
        "workload": a.workload.slug if a.workload else None,
        "vantage": a.vantage.slug,
        "baseline_median": event.snapshot.get("baseline_median"),
        "recent_median": event.snapshot.get("recent_median"),
        "shift": event.snapshot.get("shift"),
        "ci_low": event.snapshot.get("ci_low"),
        "ci_high": event.snapshot.get("ci_high"),
        "url": absolute(reverse("alerts:detail", args=[a.id])),
    }


def digest(events: list[AlertEvent]) -> Message:
    lines = []
    for event in events:
        shown = present(event.alert, event.kind, event.snapshot)
        url = absolute(reverse("alerts:detail", args=[event.alert_id]))
        words = KIND_WORDS.get(event.kind, event.kind)
        lines.append(f"- {words} ({event.severity}): [{shown.headline}]({url})")
    lines += ["", f"[All alerts]({absolute(reverse('alerts:list'))})"]
    return Message(
        title=f"tokspeed daily digest: {len(events)} alert update(s)",
        body="\n".join(lines),
        kind="digest",
        document={"alerts": [{"id": e.alert_id, "event": e.kind} for e in events]},
    )


def advice(notification: Notification) -> Message:
    change = notification.advice_change
    url = absolute(reverse("dashboard:advisor_profile", args=[change.profile.slug]))
    lines = [f"**Recommended now:** {change.after_label} (before: {change.before_label})"]
    if change.reason:
        lines.append(change.reason)
    for row in change.after_table[:TABLE_ROWS]:
        lines.append(" · ".join(str(c) for c in row))
    lines += ["", f"[The advice, its data and router feeds]({url})"]
    return Message(
        title=f"Advice changed for {change.profile.name}: "
        f"{change.before_label} → {change.after_label}",
        body="\n".join(lines),
        kind="advice.changed",
        document={
            "profile": change.profile.slug,
            "before": change.before_label,
            "after": change.after_label,
            "reason": change.reason,
            "url": url,
        },
    )


def monthly(notification: Notification) -> Message:
    """The month's report in short (alerts/monthly/summary.py), built when it is sent."""
    day = notification.report_month
    report = build_report(Month(day.year, day.month))
    url = absolute(reverse("dashboard:monthly_report", args=[report.month.slug]))
    return Message(
        title=summary.title(report),
        body=summary.markdown(report, url),
        kind="monthly.report",
        document=summary.document(report, url),
    )


def test(notification: Notification) -> Message:
    channel = notification.channel
    url = absolute(reverse("alerts:channels"))
    return Message(
        title=f"tokspeed test notification for “{channel.name}”",
        body=f"This channel works: tokspeed alerts will arrive here. [Channels]({url})",
        kind="test",
    )
