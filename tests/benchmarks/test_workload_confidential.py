"""A team's prompts never leave the places allowed to show them (docs/workloads.md).

A custom workload whose every prompt, system prompt, context clause and tool carries a marker
is run against the simulator, regresses into alert emails, is exported and is browsed publicly
and by a member without the permission; the marker (and a slice of the system prompt) must be
in none of the log records, emails, exported files or pages, and must be on the run page and in
the API for a member who holds the permission (so the search itself is shown to work).
"""

from __future__ import annotations

import gzip
import json
import logging
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import time_machine
from django.contrib.auth.models import Permission, User
from django.test import Client, override_settings

from alerts.delivery import outbox
from alerts.models import Alert, Subscription, Topic
from alerts.monthly.month import Month
from alerts.monthly.send import dispatch_monthly
from benchmarks import runner
from benchmarks.models import Run, RunStatus, Vantage, Workload
from benchmarks.withheld import WITHHELD
from dashboard.exports import jobs
from providers.models import Endpoint, Provider
from tests.alerts.test_alert_emails import body, regress, send, smtp_sink
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options
from tests.custom_workload_data import (
    TEXT_MARK,
    context_document,
    prompt_suite,
    system_prompt,
    tool_schemas,
)

pytestmark = pytest.mark.django_db(transaction=True)

# The test's instant: the run is measured five minutes before, in its month's report.
NOW = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)

SYSTEM = system_prompt(20_000)
NEEDLES = (TEXT_MARK, SYSTEM[200:260], prompt_suite(12)[5][-50:], tool_schemas(6)[0]["name"])


def leaks(text: str) -> list[str]:
    return [needle for needle in NEEDLES if needle in text]


@pytest.fixture(autouse=True)
def pinned():
    """Time starts at NOW and runs on (the run's requests take real time) for the whole test."""
    with time_machine.travel(NOW, tick=True):
        yield


@pytest.fixture
def custom_series(simulator, tmp_path, monkeypatch):
    """The custom workload on a simulated endpoint, one real run of it, alert history."""
    monkeypatch.setenv("TOKSPEED_TEST_SECRET_KEY", "sim-key")
    workload = Workload(
        slug="support-agent",
        name="Support agent",
        system_prompt=SYSTEM,
        prompt_suite=prompt_suite(12),
        context_document=context_document(),
        context_tokens=1_000,
        tools=tool_schemas(6),
        max_output_tokens=30,
    )
    workload.full_clean()
    workload.save()
    provider = Provider.objects.create(
        slug="acme",
        name="Acme",
        protocol="openai_chat",
        base_url=simulator.openai_base,
        api_key_env="TOKSPEED_TEST_SECRET_KEY",
        simulated=True,
    )
    endpoint = Endpoint.objects.create(provider=provider, slug="acme-fast", model="sim-fast")
    vantage = Vantage.objects.create(slug="eu", label="EU probe", queue="eu", is_default=True)
    return {"endpoint": endpoint, "workload": workload, "vantage": vantage}


def run_it(series) -> Run:
    run = Run.objects.create(
        **series,
        slot=NOW - timedelta(minutes=5),
        concurrency=2,
        repetitions=6,
        context_tokens=1_000,
    )
    assert runner.execute(run.id, worker="t") == RunStatus.DONE
    run.refresh_from_db()
    return run


PAGES = (
    "/",
    "/?workload=support-agent",
    "/runs/",
    "/runs/?workload=support-agent",
    "/endpoints/acme-fast/",
    "/endpoints/acme-fast/?workload=support-agent",
    "/workloads/",
    "/price/",
    "/compare/",
    "/advisor/",
    "/alerts/",
    "/api/v1/workloads/",
    "/api/v1/workloads/support-agent/",
    "/api/v1/runs/",
    "/api/v1/leaderboard/?workload=support-agent",
    "/api/v1/export/runs.csv",
    "/api/v1/export/samples.csv",
    "/api/v1/export/leaderboard.csv?workload=support-agent",
)


def test_it_keeps_a_custom_workloads_text_out_of_logs_emails_exports_and_pages(
    custom_series, tmp_path, caplog, django_user_model, settings
) -> None:
    caplog.set_level(logging.DEBUG)
    settings.ALERTS_EPISODE_HOURS = 0  # regress() stores its slow runs an hour apart
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):
        run = run_it(custom_series)
    member = django_user_model.objects.create_user("mo", "mo@team.example")
    with smtp_sink() as sink:
        outcomes = regress(custom_series, decode=40.0, ttft=900.0)
        assert any(outcome.opened for outcome in outcomes), "no alert opened: no email to grep"
        send()
    alert = Alert.objects.filter(workload=custom_series["workload"]).first()
    assert sink.messages, "no email was sent"
    for message in sink.messages:
        words = message["Subject"] + body(message, "plain") + body(message, "html")
        assert not leaks(words), f"an alert email holds the workload's text: {leaks(words)}"

    # The monthly report of the run's month, by email (the workload by name among the winners).
    month = Month.of(run.slot)
    Subscription.objects.create(email=member.email, topics=[Topic.MONTHLY], confirmed_at=run.slot)
    with smtp_sink() as sink:
        dispatch_monthly(month)
        outbox.deliver()
    (report,) = sink.messages
    words = body(report, "plain") + body(report, "html")
    assert custom_series["workload"].name in words and not leaks(words), leaks(words)

    with override_settings(TOKSPEED_EXPORT_DIR=str(tmp_path / "exports")):
        for kind in ("runs", "samples"):
            export = jobs.request_export(kind=kind, file_format="csv.gz", filters={}, user=member)
            jobs.build(export.id)
            export.refresh_from_db()
            data = gzip.decompress((tmp_path / "exports" / export.file_name).read_bytes())
            assert export.rows, f"the {kind} export is empty: nothing was searched"
            assert not leaks(data.decode()), f"the {kind} export holds the workload's text"

    pages = (*PAGES, f"/runs/{run.id}/", f"/api/v1/runs/{run.id}/", f"/alerts/{alert.id}/")
    pages += (f"/reports/monthly/{month}/", f"/reports/monthly/{month}/csv/")
    anonymous, signed_in = Client(), Client()
    signed_in.force_login(member)
    with override_settings(TOKSPEED_PUBLIC_DASHBOARD=True):
        for client, who in ((anonymous, "the public"), (signed_in, "a member without the role")):
            for url in pages:
                response = client.get(url)
                assert response.status_code == 200, (url, response.status_code)
                text = (
                    b"".join(response).decode() if response.streaming else response.content.decode()
                )
                assert not leaks(text), f"{url} shows {who} the workload's text: {leaks(text)}"

    records = "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in caplog.records)
    assert not leaks(records), "a log record holds the workload's text"

    # The one place it shows: to a member with the permission (the search above can hit).
    member.user_permissions.add(Permission.objects.get(codename="view_prompt_text"))
    reader = Client()
    reader.force_login(User.objects.get(pk=member.pk))
    assert TEXT_MARK in reader.get(f"/runs/{run.id}/").content.decode()
    assert SYSTEM[200:260] in reader.get("/api/v1/workloads/support-agent/").content.decode()


@pytest.fixture
def echoing_provider():
    """A provider on loopback that refuses every request with a 400 quoting it back: part of
    the system message, the end of the prompt and a tool's name (as some providers' errors do)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
            tool = body["tools"][0]["function"]["name"]
            message = (
                f"Invalid 'messages': the system message ({system[137:360]}) and the prompt "
                f"({user[-80:]}) break the usage policy; unknown tool {tool}."
            )
            said = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
            self.send_response(400)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(said.encode())))
            self.end_headers()
            self.wfile.write(said.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_it_keeps_a_custom_workloads_text_out_of_a_providers_error_that_quotes_it(
    custom_series, echoing_provider, tmp_path
) -> None:
    provider = custom_series["endpoint"].provider
    provider.base_url = echoing_provider
    provider.save()
    run = Run.objects.create(
        **custom_series, slot=NOW - timedelta(minutes=5), concurrency=1, repetitions=2
    )
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):
        assert runner.execute(run.id, worker="t") == RunStatus.FAILED
    messages = list(run.samples.values_list("error_message", flat=True))
    assert len(messages) == 2
    for message in messages:
        assert "Invalid 'messages': the system message (" in message, message
        assert WITHHELD in message and "break the usage policy; unknown tool" in message, message
        assert not leaks(message), f"a stored error quotes the workload: {leaks(message)}"

    anonymous = Client()
    with override_settings(TOKSPEED_PUBLIC_DASHBOARD=True):
        page = anonymous.get(f"/runs/{run.id}/").content.decode()
        assert "Invalid &#x27;messages&#x27;: the system message (" in page, "no error shown"
        for url in (f"/api/v1/runs/{run.id}/samples/", "/api/v1/export/samples.csv"):
            response = anonymous.get(url)
            text = b"".join(response).decode() if response.streaming else response.content.decode()
            assert response.status_code == 200 and "Invalid" in text, url
            assert not leaks(text + page), f"{url} or the run page quote the workload"
