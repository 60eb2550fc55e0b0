"""Alert emails through a real SMTP server on loopback (aiosmtpd): who gets what, once.

Events come from real evaluations of stored history; the sender is the outbox (as the Celery
task runs it) or, for the race, two `manage.py send_alert_emails` processes at once.
"""

from __future__ import annotations

import asyncio
import email
import math
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import Message
from pathlib import Path
from statistics import geometric_mean, median

import numpy as np
import pytest
from aiosmtpd.controller import Controller
from celery.exceptions import Retry
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from alerts.delivery import outbox
from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.models import (
    Alert,
    AlertEvent,
    Delivery,
    EmailOptOut,
    Kind,
    Notification,
    Status,
    Subscription,
)
from alerts.tasks import send_pending
from alerts.testing import daily_slots, store_history, store_run
from benchmarks.models import Run, Vantage, Workload
from providers.models import Endpoint, Provider
from tests.celery_helpers import worker_database_url

REPO = Path(__file__).resolve().parents[2]
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
        self.port = 0

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
            message = email.message_from_bytes(envelope.content, policy=policy.default)
            message["X-Envelope-To"] = ",".join(envelope.rcpt_tos)
            self.messages.append(message)
        return "250 OK"

    def to(self, address: str) -> list[Message]:
        return [m for m in self.messages if m["To"] == address]


@contextmanager
def smtp_sink(**settings) -> Iterator[SmtpSink]:
    """A real SMTP server on a free loopback port, and Django's email settings pointing at it."""
    sink = SmtpSink()
    sink.port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=sink.port)
    controller.start()
    try:
        with override_settings(
            EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=sink.port,
            EMAIL_USE_TLS=False,
            EMAIL_HOST_USER="",
            EMAIL_HOST_PASSWORD="",
            **{"TOKSPEED_BASE_URL": BASE_URL, "ALERT_EMAILS": ["oncall@team.example"], **settings},
        ):
            yield sink
    finally:
        controller.stop()


@pytest.fixture
def smtp() -> Iterator[SmtpSink]:
    with smtp_sink() as sink:
        yield sink


def body(message: Message, subtype: str) -> str:
    for part in message.walk():
        if part.get_content_type() == f"text/{subtype}":
            return part.get_content()
    raise AssertionError(f"no text/{subtype} part")


def make_series(name: str = "acme", model: str = "llama-3-70b", vantage: str = "eu") -> dict:
    provider = Provider.objects.create(
        slug=name, name=name.title(), protocol="openai_chat", base_url=f"https://{name}.example/v1"
    )
    endpoint = Endpoint.objects.create(provider=provider, slug=f"{name}-llama", model=model)
    workload, _ = Workload.objects.get_or_create(slug="w", defaults={"name": "Standard prompt"})
    vantage, _ = Vantage.objects.get_or_create(
        slug=vantage, defaults={"label": f"{vantage.upper()} probe", "queue": vantage}
    )
    return {"endpoint": endpoint, "workload": workload, "vantage": vantage}


def regress(
    series: dict,
    *,
    start_h: float = 25,
    decode: float = 49.0,
    ttft: float = 600.0,
    history: bool = True,
    seed: int = 0,
) -> list:
    """Steady history to T0 (70 tok/s, 600 ms), then 3 runs at the given level; evaluated."""
    if history:
        store_history(
            **series,
            slots=daily_slots(end=T0, days=15),
            decode=lambda s: 70.0,
            ttft=lambda s: 600.0,
            seed=seed,
        )
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


def typical(values) -> float:
    """A run's value as docs/design.md §7 defines it: the 20 % trimmed mean of its samples'
    logs (the middle three of five), back on the metric's scale."""
    logs = sorted(math.log(v) for v in values)
    cut = min(math.ceil(0.2 * len(logs)), (len(logs) - 1) // 2)
    kept = logs[cut : len(logs) - cut]
    return math.exp(sum(kept) / len(kept))


def run_values(series: dict, metric: str, start: datetime, end: datetime, keep=None):
    """Each run's value in (start, end] (the detector's unit of evidence), of the runs whose
    slot passes `keep`."""
    runs = Run.objects.filter(endpoint=series["endpoint"], slot__gt=start, slot__lte=end)
    samples = (run.samples.filter(error_category="") for run in runs if not keep or keep(run.slot))
    return [typical(rows.values_list(metric, flat=True)) for rows in samples]


def baseline_and_recent(series: dict, metric: str, end: datetime):
    """What the baseline expects for the last day's runs (19:00, 20:00 and 21:00 on a weekday):
    the median of their expected values, the 19:00 run at its bucket's level (the mean weekday
    18:00 run of the baseline window before the 72 h window) and the 20:00 and 21:00 runs, more
    than an hour off that bucket's hour, on the daily curve through the three buckets' levels
    (02, 10 and 18 h, 8 h apart: the day's first harmonic through them); the median run of the
    last 24 h; how many runs the baseline and the last day hold; and the whole days from the
    baseline's first run to its last."""
    long_start = end - timedelta(hours=72)
    start = long_start - timedelta(days=settings.ALERTS_BASELINE_DAYS)
    base = run_values(series, metric, start, long_start)
    levels = [
        math.log(
            geometric_mean(
                run_values(
                    series,
                    metric,
                    start,
                    long_start,
                    keep=lambda s, h=hour: s.hour == h and s.weekday() < 5,
                )
            )
        )
        for hour in (2, 10, 18)
    ]

    def harmonic(hour: float) -> list[float]:
        angle = hour * 2 * math.pi / 24
        return [1.0, math.cos(angle), math.sin(angle)]

    coef = np.linalg.solve([harmonic(h) for h in (2, 10, 18)], levels)
    expected = [levels[2], *(float(np.dot(harmonic(h), coef)) for h in (20, 21))]
    recent = run_values(series, metric, end - timedelta(hours=24), end)
    slots = Run.objects.filter(
        endpoint=series["endpoint"], slot__gt=start, slot__lte=long_start
    ).values_list("slot", flat=True)
    span = math.ceil((max(slots) - min(slots)) / timedelta(days=1))
    return math.exp(median(expected)), median(recent), len(base), len(recent), span


def subscribers_and_a_failing_baseline_run(series: dict, django_user_model) -> None:
    """Ana follows the endpoint, Bo takes the digest, gone@ opted out; a baseline run failed
    two requests, so the email sets the last day's errors beside the baseline's."""
    ana = django_user_model.objects.create_user("ana", "ana@team.example", "pw")
    Subscription.objects.create(user=ana, email="ana@team.example", confirmed_at=T0).endpoints.add(
        series["endpoint"]
    )
    bo = django_user_model.objects.create_user("bo", "bo@team.example", "pw")
    Subscription.objects.create(
        user=bo, email="bo@team.example", confirmed_at=T0, delivery=Delivery.DIGEST
    )
    EmailOptOut.objects.create(email="gone@team.example")
    store_run(
        **series,
        slot=T0 - timedelta(days=5, hours=9),
        decode=[70.0] * 3,
        ttft=[600.0] * 3,
        errors=["overloaded"] * 2,
    )


def assert_peer_and_error_figures(
    text: str, series: dict, peer: dict, *, start: datetime, end: datetime
) -> None:
    # The same model elsewhere: the median of its runs' medians over the same last day.
    peer_recent = median(
        Run.objects.filter(
            endpoint=peer["endpoint"], slot__gt=end - timedelta(hours=24), slot__lte=end
        ).values_list("decode_tps_p50", flat=True)
    )
    peer_base = median(
        Run.objects.filter(
            endpoint=peer["endpoint"], slot__gt=start, slot__lte=end - timedelta(hours=24)
        ).values_list("decode_tps_p50", flat=True)
    )
    shown_peer = re.search(r"llama-3-70b @ Globex +([\d.]+) tok/s +([\d.]+) tok/s", text)
    assert shown_peer and float(shown_peer[1]) == pytest.approx(peer_base, abs=0.051)
    assert float(shown_peer[2]) == pytest.approx(peer_recent, abs=0.051)
    baseline_requests = sum(
        run.ok_count + run.error_count
        for run in Run.objects.filter(
            endpoint=series["endpoint"], slot__gt=start, slot__lte=end - timedelta(hours=24)
        )
    )
    shown_errors = (
        f"0 of 15 requests in the last 24 h (0.0 %); baseline {200 / baseline_requests:.1f} %"
    )
    assert shown_errors in text, text


@pytest.mark.django_db
def test_it_emails_each_recipient_once_per_round_with_the_numbers(smtp, django_user_model):
    series = make_series()
    peer = make_series("globex", model="meta/llama-3-70b")
    store_history(
        **peer,
        slots=daily_slots(end=T0 + timedelta(hours=27), days=16),
        decode=lambda s: 80.0,
        ttft=lambda s: 500.0,
    )
    subscribers_and_a_failing_baseline_run(series, django_user_model)
    with override_settings(ALERT_EMAILS=["oncall@team.example", "gone@team.example"]):
        outcomes = regress(series, decode=49.0, ttft=840.0)  # 30 % slower, 40 % higher TTFT
        assert len(outcomes[-1].opened) == 2  # both in the same round
        report = send()
    assert len(report.sent) == 2
    assert sorted(m["To"] for m in smtp.messages) == ["ana@team.example", "oncall@team.example"]
    message = smtp.to("oncall@team.example")[0]
    text, html = body(message, "plain"), body(message, "html")
    print(message["Subject"], text, sep="\n")  # pytest -s shows the email as people read it

    shown = re.fullmatch(
        r"\[tokspeed\] Decode speed of llama-3-70b @ Acme is (\d+) % slower \(\+1 more\)",
        message["Subject"],
    )
    assert shown and abs(int(shown[1]) - (1 - 49 / 70) * 100) <= 3, message["Subject"]
    end = T0 + timedelta(hours=27)
    start = end - timedelta(hours=72, days=settings.ALERTS_BASELINE_DAYS)  # the baseline's
    base, recent, n_base, n_recent, span = baseline_and_recent(series, "decode_tps", end)
    shown_base = re.search(
        r"Baseline mean:\s+([\d.]+) tok/s at the same times of day and week \((\d+) runs over "
        r"(\d+) days up to 0?8 Mar 2026 21:00 UTC\)",
        text,
    )
    assert shown_base, text
    assert float(shown_base[1]) == pytest.approx(base, abs=0.051) and int(shown_base[2]) == n_base
    assert int(shown_base[3]) == span  # what the baseline really covers: a young series
    assert (
        f"Recent median:  {recent:.1f} tok/s (24 h up to 11 Mar 2026 21:00 UTC, "
        f"{n_recent} runs)" in text
    )
    _, recent_ttft, *_ = baseline_and_recent(series, "ttft_ms", end)
    assert f"{recent_ttft:,.0f} ms" in text
    assert "Time to first token of llama-3-70b @ Acme is 4" in text
    assert "one-sided p = " in text and "Benjamini–Hochberg over" in text
    assert "00–06 UTC" in text and "06–12 UTC" in text and "18–24 UTC" in text  # by time of day
    assert_peer_and_error_figures(text, series, peer, start=start, end=end)
    assert f"{BASE_URL}/endpoints/acme-llama/?workload=w&vantage=eu" in text
    for alert_id in outcomes[-1].opened:
        for action in ("acknowledge", "accept", "invalid"):
            assert f"{BASE_URL}/alerts/{alert_id}/{action}/" in text
    assert (
        "Unsubscribe from all tokspeed alert emails: https://tokspeed.example/alerts/unsubscribe/"
        in text
    )
    assert message["List-Unsubscribe"].strip().startswith(f"<{BASE_URL}/alerts/unsubscribe/")
    assert (
        f"llama-3-70b @ Acme is {shown[1]}" in html
        and "<table" in html
        and "Accept as new baseline" in html
    )
    # Once each: another pass sends nothing, and the digest subscriber waits for the digest.
    assert send().sent == []
    assert len(smtp.messages) == 2


@pytest.mark.django_db
def test_it_unsubscribes_from_the_link_in_the_email_without_logging_in(smtp, client):
    regress(make_series())
    send()
    text = body(smtp.to("oncall@team.example")[0], "plain")
    url = next(w for w in text.split() if "/alerts/unsubscribe/" in w)
    path = url.removeprefix(BASE_URL)
    page = client.get(path)
    assert page.status_code == 200 and b"oncall@team.example" in page.content
    assert not EmailOptOut.objects.exists()  # a mail scanner opening the link changes nothing
    done = client.post(path, {"List-Unsubscribe": "One-Click"})  # what mail clients send
    assert done.status_code == 200 and b"Unsubscribed" in done.content
    assert EmailOptOut.objects.filter(email="oncall@team.example").exists()
    regress(make_series("globex"), seed=5)
    send()
    assert len(smtp.to("oncall@team.example")) == 1  # nothing after unsubscribing
    assert client.get(path[:-3] + "xx/").status_code == 400  # a tampered link


@pytest.mark.django_db
def test_it_retries_an_smtp_failure_with_backoff_and_sends_once(smtp):
    regress(make_series())
    smtp.fail_data = 1  # the server answers 451 once
    with pytest.raises(Retry):
        send_pending.run()  # the task asks Celery to retry
    notification = Notification.objects.get()
    assert notification.sent_at is None and notification.attempts == 1
    assert "451" in notification.last_error
    assert notification.claimed_until > timezone.now() + timedelta(seconds=25)  # backoff
    assert send().sent == [] and smtp.messages == []  # held back until the backoff ends
    Notification.objects.update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert send().sent == [notification.id]
    assert send().sent == []
    assert len(smtp.messages) == 1


@pytest.mark.django_db
def test_it_gives_up_on_a_recipient_the_server_refuses(smtp, django_user_model):
    ana = django_user_model.objects.create_user("ana", "ana@team.example", "pw")
    Subscription.objects.create(user=ana, email="ana@team.example", confirmed_at=T0)
    smtp.refuse = {"oncall@team.example"}
    regress(make_series())
    report = send()
    assert len(report.sent) == 1 and len(report.failed) == 1 and report.retry_in_s is None
    refused = Notification.objects.get(email="oncall@team.example")
    assert refused.failed_at is not None and "550" in refused.last_error
    assert [m["To"] for m in smtp.messages] == ["ana@team.example"]
    assert send().sent == [] and send().failed == []


@pytest.mark.django_db
def test_it_sends_digest_subscribers_one_digest(smtp, django_user_model):
    bo = django_user_model.objects.create_user("bo", "bo@team.example", "pw")
    Subscription.objects.create(
        user=bo, email="bo@team.example", confirmed_at=T0, delivery=Delivery.DIGEST
    )
    regress(make_series(), decode=49.0, ttft=840.0)
    regress(make_series("globex"), seed=7)
    send()
    assert smtp.to("bo@team.example") == []
    outbox.dispatch(Delivery.DIGEST)
    outbox.deliver()
    digest = smtp.to("bo@team.example")
    assert len(digest) == 1 and digest[0]["Subject"].startswith("[tokspeed] Daily digest")
    text = body(digest[0], "plain")
    assert "3 alert updates" in text and "@ Acme" in text and "@ Globex" in text
    outbox.dispatch(Delivery.DIGEST)
    assert outbox.deliver().sent == []


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_never_sends_an_email_twice_with_two_sender_processes(smtp, django_user_model):
    ana = django_user_model.objects.create_user("ana", "ana@team.example", "pw")
    Subscription.objects.create(user=ana, email="ana@team.example", confirmed_at=T0)
    names = ["acme", "globex", "initech", "umbrella"]
    for k, name in enumerate(names):
        # Four rounds, each opening one alert (from four vantages: four providers slowing down
        # together at one vantage would be reported as one probe alert instead).
        regress(make_series(name, vantage=f"v{k}"), seed=10 * k)
    smtp.delay_s = 0.05  # a slower server widens the window for a race
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tokspeed.test_settings",
        "DATABASE_URL": worker_database_url(),
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp.port),
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "ALERT_EMAILS": "oncall@team.example",
        "TOKSPEED_BASE_URL": BASE_URL,
    }
    command = [sys.executable, "manage.py", "send_alert_emails"]
    senders = [
        subprocess.Popen(
            command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for _ in range(2)
    ]
    outputs = [sender.communicate(timeout=120)[0] for sender in senders]
    assert [sender.returncode for sender in senders] == [0, 0], outputs
    claimed = [int(re.search(r"sent (\d+)", out)[1]) for out in outputs]
    assert sum(claimed) == 8, outputs  # what both senders say they sent, together
    for to in ("ana@team.example", "oncall@team.example"):
        subjects = [m["Subject"] for m in smtp.to(to)]
        for name in names:  # each round's email exactly once per recipient
            assert sum(f"llama-3-70b @ {name.title()} is" in s for s in subjects) == 1, subjects
    assert len(smtp.messages) == 8
    assert Notification.objects.filter(sent_at__isnull=True).count() == 0


@pytest.mark.django_db
def test_it_tells_immediate_recipients_about_a_flapping_series_in_the_digest_only(smtp):
    series = make_series()
    for _ in range(2):  # four flips this week already
        old = Alert.objects.create(
            kind=Kind.REGRESSION, metric="decode_tps", status=Status.RESOLVED, **series
        )
        AlertEvent.objects.bulk_create(
            [
                AlertEvent(alert=old, kind=k, dispatched_at=T0, digested_at=T0)
                for k in ("opened", "resolved")
            ]
        )
    regress(series)
    assert Alert.objects.get(status=Status.OPEN).digest_only
    assert send().sent == [] and smtp.messages == []
    outbox.dispatch(Delivery.DIGEST)
    outbox.deliver()
    [digest] = smtp.to("oncall@team.example")
    assert "Decode speed of llama-3-70b @ Acme" in body(digest, "plain")
