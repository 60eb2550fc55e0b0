"""A team's prompts never leave the places allowed to show them (docs/workloads.md).

A custom workload whose every prompt, system prompt, context clause and tool carries a marker
is run against the simulator, regresses into alert emails, is exported and is browsed publicly
and by a member without the permission; the marker (and a slice of the system prompt) must be
in none of the log records, emails, exported files or pages, and must be on the run page and in
the API for a member who holds the permission (so the search itself is shown to work).
"""

from __future__ import annotations

import gzip
import logging
from datetime import UTC, datetime, timedelta

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
    custom_series, tmp_path, caplog, django_user_model
) -> None:
    caplog.set_level(logging.DEBUG)
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
