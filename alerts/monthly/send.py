"""The monthly report through the one outbox: one Notification per subscriber and one per
channel of the "monthly report" topic per month (unique constraints, so a second pass adds
nothing), rendered when it is sent: an email in plain text and HTML (alerts/delivery/emails.py),
a post in short (alerts/delivery/channels/messages.py, alerts/monthly/summary.py)."""

from __future__ import annotations

from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse

from alerts.delivery.mail_parts import list_email, text_table
from alerts.delivery.recipients import Audience, normal
from alerts.models import Channel, Delivery, Notification, Topic
from alerts.pages.presenters import absolute

from . import tables
from .month import Month
from .report import MonthlyReport, build


def recipients() -> list[str]:
    """Confirmed, active subscriptions to the monthly report, less the opted-out addresses."""
    audience = Audience()
    wanted = {normal(s.email) for s in audience.subscriptions if Topic.MONTHLY in s.topics}
    return sorted(wanted - audience.opted_out)


def channels() -> list[Channel]:
    """Active channels that chose the monthly report and take it (no pagers, no routers)."""
    return [c for c in Channel.objects.filter(active=True) if c.takes_monthly]


def dispatch_monthly(month: Month) -> list[int]:
    """Queue the month's report for every subscriber and channel not sent it yet; the new rows'
    ids. The whole report, whatever providers or endpoints a route chose (as for email)."""
    to: list[dict[str, object]] = [{"email": email} for email in recipients()]
    to += [{"channel": channel} for channel in channels()]
    created = []
    for recipient in to:
        with transaction.atomic():
            notification, made = Notification.objects.get_or_create(
                **recipient,
                report_month=month.first_day,
                defaults={"delivery": Delivery.IMMEDIATE},
            )
        if made:
            created.append(notification.id)
    return created


def subject(month: Month) -> str:
    return f"[tokspeed] Monthly report, {month.label}"


def context(report: MonthlyReport) -> dict[str, object]:
    """What both views of the email (and `manage.py monthly_report`) render."""
    cells = tables.tables(report)
    return {
        "report": report,
        "cells": cells,
        "cards": tables.cards(cells["endpoints"]),
        "endpoint_header": tables.ENDPOINT_HEADER,
        "winner_header": tables.WINNER_HEADER,
        "text": {
            name: tables_text(header, cells[name])
            for name, header in (
                ("endpoints", tables.ENDPOINT_HEADER),
                ("workloads", ["Workload", *tables.WINNER_HEADER[1:]]),
                ("times_of_day", ["Time of day", *tables.WINNER_HEADER[1:]]),
            )
        },
        "url": absolute(reverse("dashboard:monthly_report", args=[report.month.slug])),
    }


def plain_text(report: MonthlyReport) -> str:
    return render_to_string("emails/monthly_report.txt", context(report))


def monthly_email(notification: Notification, *, connection=None) -> EmailMultiAlternatives:
    day = notification.report_month
    month = Month(day.year, day.month)
    return list_email(
        notification.email,
        subject=subject(month),
        template="monthly_report",
        context=context(build(month)),
        connection=connection,
    )


def tables_text(header: list[str], rows: list[list[str]]) -> str:
    return text_table(header, rows) if rows else ""
