"""Alert emails through a real SMTP server on loopback (aiosmtpd): who gets what, once.

Events come from real evaluations of stored history; the sender is the outbox (as the Celery
task runs it) or, for the race, two `manage.py send_alert_emails` processes at once.
"""

from __future__ import annotations

import asyncio
import email
import os
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from email.message import Message
from pathlib import Path
from statistics import median

import pytest
from aiosmtpd.controller import Controller
from celery.exceptions import Retry
from django.test import override_settings
from django.utils import timezone

from alerts import outbox
from alerts.evaluate import evaluate_after_run
from alerts.models import Delivery, EmailOptOut, Notification, Subscription
from alerts.tasks import send_pending
from alerts.testing import daily_slots, store_history
from benchmarks.models import Sample, Vantage, Workload
from providers.models import Endpoint, Provider
from tests.celery_helpers import worker_database_url

REPO = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 3, 10, 18, 0, tzinfo=UTC)
BASE_URL = "https://tokspeed.example"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SmtpSink:
    """Collects every message it accepts; can refuse DATA (transient) or RCPT (permanent)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.lock = threading.Lock()
        self.fail_data = 0  # answer this many DATA commands with 451
        self.refuse = set()  # recipients answered with 550
        self.delay_s = 0.0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return "550 5.1.1 No such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        with self.lock:
            if self.fail_data:
                self.fail_data -= 1
                return "451 4.3.0 Try again later"
            message = email.message_from_bytes(envelope.content)
            message["X-Envelope-To"] = ",".join(envelope.rcpt_tos)
            self.messages.append(message)
        return "250 OK"

    def to(self, address: str) -> list[Message]:
        return [m for m in self.messages if m["To"] == address]


@pytest.fixture
def smtp():
    sink = SmtpSink()
    controller = Controller(sink, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        with override_settings(
            EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=controller.port,
            EMAIL_USE_TLS=False,
            EMAIL_HOST_USER="",
            EMAIL_HOST_PASSWORD="",
            TOKSPEED_BASE_URL=BASE_URL,
            ALERT_EMAILS=["oncall@team.example"],
        ):
            yield sink
    finally:
        controller.stop()


def body(message: Message, subtype: str) -> str:
    for part in message.walk():
        if part.get_content_type() == f"text/{subtype}":
            return part.get_payload(decode=True).decode(part.get_content_charset())
    raise AssertionError(f"no text/{subtype} part")


def make_series(name: str = "acme", model: str = "llama-3-70b") -> dict:
    provider = Provider.objects.create(
        slug=name, name=name.title(), protocol="openai_chat", base_url=f"https://{name}.example/v1"
    )
    endpoint = Endpoint.objects.create(provider=provider, slug=f"{name}-llama", model=model)
    workload, _ = Workload.objects.get_or_create(slug="w", defaults={"name": "Standard prompt"})
    vantage, _ = Vantage.objects.get_or_create(slug="eu", defaults={"label": "EU probe", "queue": "eu"})
    return {"endpoint": endpoint, "workload": workload, "vantage": vantage}


def regress(series: dict, *, start_h: float = 25, decode: float = 49.0, ttft: float = 600.0,
            history: bool = True, seed: int = 0) -> list:
    """Steady history to T0 (70 tok/s, 600 ms), then 3 runs at the given level; evaluated."""
    if history:
        store_history(**series, slots=daily_slots(end=T0, days=15), decode=lambda s: 70.0,
                      ttft=lambda s: 600.0, seed=seed)
    runs = store_history(
        **series,
        slots=[T0 + timedelta(hours=start_h + k) for k in range(3)],
        decode=lambda s: decode,
        ttft=lambda s: ttft,
        seed=seed + 1,
    )
    return [evaluate_after_run(run.id) for run in runs]


def send() -> outbox.DeliveryReport:
    outbox.dispatch(Delivery.IMMEDIATE)
    return outbox.deliver()
