"""Rendering one Notification as an email: an alert email (plain text and HTML), "the advice
changed" (plain text) or the monthly report (alerts/monthly/send.py), each to one recipient with
an unsubscribe link."""

from __future__ import annotations

from datetime import UTC

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.urls import reverse

from alerts.delivery.mail_parts import list_email, text_table
from alerts.delivery.recipients import normal
from alerts.models import Delivery, Notification
from alerts.monthly.send import monthly_email
from alerts.pages.presenters import Presented, absolute, present

SUBJECT_LIMIT = 150
KIND_WORDS = {
    "opened": "New alert",
    "escalated": "Got worse",
    "resolved": "Resolved",
    "new_normal": "New normal",
}


def subject(notification: Notification, shown: list[Presented]) -> str:
    if notification.delivery == Delivery.DIGEST:
        day = notification.created_at.astimezone(UTC).strftime("%d %b %Y")
        return f"[tokspeed] Daily digest, {day}: {len(shown)} alert update(s)"
    text = shown[0].headline
    if shown[0].kind == "resolved":
        text = f"Resolved: {text}"
    elif shown[0].kind == "new_normal":
        text = f"New normal: {text}"
    if len(shown) > 1:
        text += f" (+{len(shown) - 1} more)"
    if len(text) > SUBJECT_LIMIT:
        text = text[: SUBJECT_LIMIT - 1] + "…"
    return f"[tokspeed] {text}"


def why(notification: Notification) -> str:
    if normal(notification.email) in {normal(e) for e in settings.ALERT_EMAILS}:
        return "this address is in tokspeed's ALERT_EMAILS"
    if notification.delivery == Delivery.DIGEST:
        return "you subscribed to tokspeed alerts (daily digest)"
    return "you subscribed to tokspeed alerts"


def build(notification: Notification, *, connection=None) -> EmailMultiAlternatives:
    if notification.advice_change_id:
        return advice_email(notification, connection=connection)
    if notification.report_month:
        return monthly_email(notification, connection=connection)
    events = notification.events.select_related(
        "alert__endpoint__provider", "alert__workload", "alert__vantage"
    ).order_by("created_at", "id")
    shown = []
    for event in events:
        item = present(event.alert, event.kind, event.snapshot)
        item.kind_words = KIND_WORDS.get(event.kind, event.kind)
        item.text_tables = [
            {**t, "text": text_table(t["header"], t["rows"]) if t["rows"] else ""}
            for t in item.tables
        ]
        item.label_width = max((len(label) for label, _ in item.facts), default=0) + 1
        shown.append(item)
    if not shown:
        raise ValueError(f"notification {notification.id} has no events")
    context = {
        "items": shown,
        "digest": notification.delivery == Delivery.DIGEST,
        "why": why(notification),
        "alerts_url": absolute(reverse("alerts:list")),
    }
    return list_email(
        notification.email,
        subject=subject(notification, shown),
        template="alerts",
        context=context,
        connection=connection,
    )


ADVICE_HEADER = ["#", "Endpoint", "Task p50", "Task p90", "$ / 1,000 tasks", "Availability"]


def advice_subject(change) -> str:
    text = f"Advice changed for {change.profile.name}: {change.before_label} → {change.after_label}"
    return f"[tokspeed] {text}"[:300]


def advice_email(notification: Notification, *, connection=None) -> EmailMultiAlternatives:
    change = notification.advice_change
    context = {
        "change": change,
        "before": text_table(ADVICE_HEADER, change.before_table) if change.before_table else "",
        "after": text_table(ADVICE_HEADER, change.after_table) if change.after_table else "",
        "url": absolute(reverse("dashboard:advisor_profile", args=[change.profile.slug])),
    }
    return list_email(
        notification.email,
        subject=advice_subject(change),
        template="advice_changed",
        context=context,
        html=False,
        connection=connection,
    )
