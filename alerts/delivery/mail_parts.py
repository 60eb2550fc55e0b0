"""Parts every email to a subscriber shares: plain-text tables, the unsubscribe link and the list
headers, and the message itself (alerts/delivery/emails.py, alerts/monthly/send.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse

from alerts.delivery.tokens import unsubscribe_token
from alerts.pages.presenters import absolute


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell: readable in any mail client's plain-text view."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def headers(unsubscribe: str) -> dict[str, str]:
    return {
        "List-Unsubscribe": f"<{unsubscribe}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        "Auto-Submitted": "auto-generated",
    }


def list_email(
    to: str,
    *,
    subject: str,
    template: str,
    context: dict[str, Any],
    html: bool = True,
    connection=None,
) -> EmailMultiAlternatives:
    """`emails/<template>.txt` (and `.html`) to one subscriber, with the links to unsubscribe and
    to manage subscriptions in the context and the list headers a mail client acts on."""
    unsubscribe = absolute(reverse("alerts:unsubscribe", args=[unsubscribe_token(to)]))
    shown = {
        **context,
        "unsubscribe_url": unsubscribe,
        "subscriptions_url": absolute(reverse("alerts:subscriptions")),
    }
    message = EmailMultiAlternatives(
        subject=subject,
        body=render_to_string(f"emails/{template}.txt", shown),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[to],
        connection=connection,
        headers=headers(unsubscribe),
    )
    if html:
        message.attach_alternative(render_to_string(f"emails/{template}.html", shown), "text/html")
    return message
