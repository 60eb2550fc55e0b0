"""DEBUG only: the alert emails that `make run` wrote to files instead of sending them."""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from .access import dashboard_view

FILE_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
SHOWN = 50  # the newest files; the folder keeps every one


@dataclass(frozen=True)
class Mail:
    file: str
    date: str
    to: str
    subject: str
    body: str


def read_mails(folder: Path, limit: int = SHOWN) -> list[Mail]:
    """Messages in the file backend's folder, newest first (a file may hold several)."""
    files = sorted(folder.glob("*.log"), key=lambda f: f.stat().st_mtime, reverse=True)
    mails = []
    for file in files[:limit]:
        separator = "-" * 79  # the file backend writes this line after each message
        for raw in file.read_text(errors="replace").split(separator):
            if not raw.strip():
                continue
            message = email.message_from_string(raw.lstrip(), policy=email.policy.default)
            part = message.get_body(preferencelist=("plain", "html"))
            mails.append(
                Mail(
                    file=file.name,
                    date=str(message["Date"] or ""),
                    to=str(message["To"] or ""),
                    subject=str(message["Subject"] or "(no subject)"),
                    body=part.get_content() if part is not None else "",
                )
            )
    return mails


@dashboard_view
def debug_mail_page(request: HttpRequest) -> HttpResponse:
    if not settings.DEBUG or settings.EMAIL_BACKEND != FILE_BACKEND:
        raise Http404("Only under DEBUG with the file email backend (make run).")
    folder = Path(settings.EMAIL_FILE_PATH)
    mails = read_mails(folder) if folder.is_dir() else []
    return render(request, "debug/mail.html", {"mails": mails, "folder": folder})
