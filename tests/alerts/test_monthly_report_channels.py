"""The monthly report to channels: on the 1st the beat's task (or `manage.py monthly_report
--send`) queues one post per channel of the "monthly report" topic through the one outbox, and
loopback receivers shaped as Slack, Teams, Discord, ntfy and a signed webhook get it once each,
carrying the month's key facts in short and the link to the page; pagers never get it."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
import time_machine
from django.core.management import call_command
from django.test import override_settings

from alerts.channel_forms import ChannelForm
from alerts.delivery import outbox
from alerts.delivery.channels import secrets
from alerts.models import Alert, Kind, Metric, Notification, Service, Severity, Status, Topic
from alerts.monthly import summary
from alerts.monthly.month import Month
from alerts.monthly.report import build
from alerts.tasks import monthly_report
from benchmarks.models import Workload
from tests import dashboard_data as data
from tests.alerts.test_alert_channels import DISCORD, SLACK, channel, verify
from tests.alerts.test_alert_emails import BASE_URL
from tests.channel_receivers import Receiver, receivers
from tests.custom_workload_data import TEXT_MARK, prompt_suite, system_prompt

pytestmark = pytest.mark.django_db

FIRST_OF_JULY = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)  # July 1 or 2 in every TIME_ZONE
MID_JUNE = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
SLACK_ALERTS_ONLY = "https://hooks.slack.com/services/T0001/B0009/zyxwvutsrqponmlkjihgfedc"


@pytest.fixture
def receiver(monkeypatch, tmp_path):
    with (
        receivers(monkeypatch, tmp_path) as r,
        override_settings(TOKSPEED_BASE_URL=BASE_URL, ALERT_EMAILS=[], CHANNELS_TIMEOUT_S=2.0),
    ):
        yield r


def days(month: int) -> list[datetime]:
    """Two slots a day, days 3–26: inside the month in any TIME_ZONE."""
    return [
        datetime(2026, month, day, hour, tzinfo=UTC) for day in range(3, 27) for hour in (2, 14)
    ]


def seed() -> dict:
    """Two endpoints over May and June: one steady, one that got slower in June; a team's own
    workload (its prompts carry TEXT_MARK) measured in June; one alert resolved in June, one
    still open."""
    data.default_workloads()
    vantage = data.vantage()
    acme = data.provider("acme")
    steady, slowing = data.endpoint(acme, "steady-70b"), data.endpoint(acme, "slowing-8b")
    for month, slow_tps, slow_ttft in ((5, 80.0, 400.0), (6, 50.0, 800.0)):
        for i, slot in enumerate(days(month)):
            jitter = i % 3
            data.run(steady, slot, decode_tps=100.0 + jitter, ttft_ms=300.0 + jitter)
            data.run(slowing, slot, decode_tps=slow_tps + jitter, ttft_ms=slow_ttft + jitter)
    custom = Workload.objects.create(
        slug="acme-support",
        name="Acme support",
        system_prompt=system_prompt(2_000),
        prompt_suite=prompt_suite(3),
    )
    for slot in days(6)[:6]:
        data.run(steady, slot, wl=custom, decode_tps=95.0, ttft_ms=350.0)
        data.run(slowing, slot, wl=custom, decode_tps=45.0, ttft_ms=900.0)
    base = data.workload("base")
    with time_machine.travel(MID_JUNE, tick=False):
        resolved = Alert.objects.create(
            kind=Kind.REGRESSION,
            metric=Metric.DECODE,
            endpoint=slowing,
            workload=base,
            vantage=vantage,
            severity=Severity.MAJOR,
            status=Status.RESOLVED,
            closed_at=MID_JUNE + timedelta(days=2),
        )
        still_open = Alert.objects.create(
            kind=Kind.REGRESSION,
            metric=Metric.TTFT,
            endpoint=slowing,
            workload=custom,
            vantage=vantage,
            severity=Severity.MINOR,
        )
    return {"steady": steady, "slowing": slowing, "resolved": resolved, "open": still_open}


def monthly_channels(receiver: Receiver) -> dict[str, object]:
    """Every kind of channel choosing the monthly report (pagers made past the form, which
    refuses them), and a Slack channel that chose alerts only."""
    monthly = {"topics": [Topic.MONTHLY, Topic.REGRESSION]}
    secure = receiver.secure.split("//")[1]
    made = {
        "slack": channel(Service.SLACK, SLACK, **monthly),
        "teams": channel(Service.TEAMS, f"workflows://{secure}/wf123/sig456", **monthly),
        "discord": channel(Service.DISCORD, DISCORD, **monthly),
        "ntfy": channel(
            Service.NTFY, f"ntfy://{receiver.base.split('//')[1]}/tokspeed-monthly", **monthly
        ),
        "webhook": channel(Service.WEBHOOK, f"{receiver.base}/hook", **monthly),
        "pagerduty": channel(Service.PAGERDUTY, "R0UT1NGKEY0123456789abcdef", **monthly),
        "opsgenie": channel(Service.OPSGENIE, "0psg3n1e-key-0123456789", **monthly),
        "router": channel(Service.ROUTER, f"{receiver.base}/router", **monthly),
    }
    channel(Service.SLACK, SLACK_ALERTS_ONLY, name="alerts only", topics=[Topic.REGRESSION])
    return made


def posts(receiver: Receiver) -> dict[str, list]:
    ntfy = [r for r in receiver.requests if b"tokspeed-monthly" in r.path.encode() + r.body]
    return {
        "slack": receiver.at("/slack/T0001/B0002/"),
        "slack, alerts only": receiver.at("/slack/T0001/B0009/"),
        "teams": receiver.at("/workflows/"),
        "discord": receiver.at("/discord/"),
        "ntfy": ntfy,
        "webhook": receiver.at("/hook"),
        "pagerduty": receiver.at("/pagerduty/"),
        "opsgenie": receiver.at("/opsgenie/"),
        "router": receiver.at("/router"),
    }


def section(text: str, heading: str) -> str:
    """The lines under a bold heading, up to the next blank line."""
    start = text.index(heading)
    end = text.find("\n\n", start)
    return text[start : end if end > 0 else None]


def test_it_posts_the_report_once_to_each_channel_that_chose_it_on_the_first(
    receiver: Receiver, tmp_path: Path
):
    with time_machine.travel(FIRST_OF_JULY, tick=False):
        seeded = seed()
        made = monthly_channels(receiver)
        monthly_report()
        monthly_report()  # the beat's second chance (the 2nd), or a redelivered task
        queued = Notification.objects.filter(report_month=Month(2026, 6).first_day)
        assert sorted(queued.values_list("channel__name", flat=True)) == sorted(
            ["slack", "teams", "discord", "ntfy", "webhook"]
        ), "one row per chat channel and webhook; no pager, no router, not the alerts-only one"
        report = outbox.deliver()
        assert len(report.sent) == 5 and not report.failed, report
        monthly_report()
        assert outbox.deliver().sent == [], "a second pass posts nothing"
    got = {name: len(requests) for name, requests in posts(receiver).items()}
    assert got == {
        "slack": 1,
        "slack, alerts only": 0,
        "teams": 1,
        "discord": 1,
        "ntfy": 1,
        "webhook": 1,
        "pagerduty": 0,
        "opsgenie": 0,
        "router": 0,
    }
    everything = b"".join(r.body for r in receiver.requests).decode()
    assert TEXT_MARK not in everything, "a custom workload's text went to a channel"
    for name in ("slack", "teams", "webhook"):  # to read as the receiver does
        (tmp_path / f"{name}.json").write_bytes(posts(receiver)[name][0].body)

    slack = posts(receiver)["slack"][0].json
    blocks = slack["attachments"][0]["blocks"]
    assert blocks[0]["type"] == "header"
    assert blocks[0]["text"]["text"] == "tokspeed monthly report, June 2026"
    text = "\n".join(b["text"]["text"] for b in blocks[1:] if b.get("text"))
    steady, slowing = seeded["steady"].display_name, seeded["slowing"].display_name
    winners = section(text, "Winners per workload")
    assert f"Base (standard prompt): fastest decode {steady}" in winners, winners
    assert "Acme support: fastest decode" in winners, "a team's workload, by name"
    slower = section(text, "Slower than the month before")
    assert slowing in slower and steady not in slower, slower
    assert "decode" in slower and "first token" in slower and "%)" in slower, slower
    alerts = section(text, "Alerts of the month (2)")
    assert f"#{seeded['resolved'].id} " in alerts and ": resolved" in alerts, alerts
    assert f"#{seeded['open'].id} " in alerts and ": still open" in alerts, alerts
    assert "https://tokspeed.example/reports/monthly/2026-06/|" in text, "a Slack-style link"

    card = posts(receiver)["teams"][0].json["attachments"][0]["content"]
    assert card["type"] == "AdaptiveCard"
    (body,) = [b["text"] for b in card["body"] if b.get("id") == "body"]
    assert re.search(r"(?<!\n)\n(?!\n)", body) is None, "Teams needs a blank line per line"
    for fact in (steady, "Acme support", f"#{seeded['resolved'].id} ", "/reports/monthly/2026-06/"):
        assert fact in body, fact
    # Named with its provider, as every endpoint row of the report is.
    slower_line = f"**Slower than the month before**\n\n- {seeded['slowing'].label}: decode "
    assert slower_line in body, body

    hook = posts(receiver)["webhook"][0]
    verify(secrets.signing_secret(made["webhook"]), hook.headers["X-Tokspeed-Signature"], hook.body)
    assert hook.headers["X-Tokspeed-Event"] == "monthly.report"
    document = hook.json
    assert document["month"] == "2026-06" and document["type"] == "monthly.report"
    assert [s["endpoint"] for s in document["slower"]] == [seeded["slowing"].slug]
    assert {a["id"]: a["ended"] for a in document["alerts"]} == {
        seeded["resolved"].id: "resolved",
        seeded["open"].id: "still open",
    }


def test_it_sends_on_demand_once_and_retries_a_failing_receiver(receiver: Receiver):
    receiver.script = {"/hook": [500]}
    with time_machine.travel(FIRST_OF_JULY, tick=False) as clock:
        seed()
        channel(Service.WEBHOOK, f"{receiver.base}/hook", topics=[Topic.MONTHLY])
        out = StringIO()
        call_command("monthly_report", month="2026-06", send=True, stdout=out)
        assert "queued for 1 new recipient(s); sent 0, gave up 0" in out.getvalue()
        (row,) = Notification.objects.filter(channel__isnull=False)
        assert row.last_error == "HTTP 500 from the receiver" and row.claimed_until
        clock.shift(timedelta(hours=1))  # past the backoff
        call_command("monthly_report", month="2026-06", send=True, stdout=out)
        assert "queued for 0 new recipient(s); sent 1, gave up 0" in out.getvalue()
        call_command("monthly_report", month="2026-06", send=True, stdout=out)
    answered = [r.json["delivery"] for r in receiver.at("/hook")]
    assert answered == [row.id, row.id], "the 500, then one post that was taken"


def test_it_offers_the_monthly_report_to_chat_channels_and_refuses_it_for_pagers(admin_client):
    page = admin_client.get("/alerts/channels/new/")
    assert page.status_code == 200
    assert 'value="monthly"' in page.content.decode() and "Monthly report" in page.content.decode()
    fields = {"name": "x", "min_severity": "minor", "active": "on", "topics": [Topic.MONTHLY]}
    slack = ChannelForm({**fields, "service": Service.SLACK, "address": SLACK})
    assert slack.is_valid(), slack.errors
    pager = ChannelForm({**fields, "service": Service.PAGERDUTY, "address": "R0UT1NGKEY0123456"})
    assert not pager.is_valid()
    assert "PagerDuty pages on incidents only" in str(pager.errors["topics"])
    assert "monthly report" in str(pager.errors["topics"])
    digest = ChannelForm(
        {**fields, "service": Service.PAGERDUTY, "address": "R0UT1NGKEY0123456",
         "topics": [Topic.OUTAGE, Topic.DIGEST, Topic.ADVICE]}
    )  # fmt: skip
    assert not digest.is_valid()
    assert "daily digest (channels), the advice changed" in str(digest.errors["topics"])
    body = {
        "name": "pager",
        "service": "opsgenie",
        "address": "0psg3n1e-key-0123456789",
        "topics": ["outage", "monthly"],
    }
    refused = admin_client.post("/api/v1/channels/", body, content_type="application/json")
    assert refused.status_code == 400 and "monthly report" in refused.json()["topics"][0]
    body = {**body, "service": "slack", "address": SLACK}
    made = admin_client.post("/api/v1/channels/", body, content_type="application/json")
    assert made.status_code == 201 and made.json()["topics"] == ["outage", "monthly"]


def test_it_keeps_a_long_month_short_with_the_link_first():
    with time_machine.travel(FIRST_OF_JULY, tick=False):
        seeded = seed()
        for _ in range(summary.SHOWN + 2):  # more outages than a section shows
            with time_machine.travel(MID_JUNE, tick=False):
                Alert.objects.create(
                    kind=Kind.OUTAGE,
                    metric=Metric.AVAILABILITY,
                    endpoint=seeded["steady"],
                    workload=data.workload("base"),
                    vantage=data.vantage(),
                    status=Status.RESOLVED,
                    closed_at=MID_JUNE + timedelta(hours=1),
                )
        text = summary.markdown(build(Month(2026, 6)), "https://tokspeed.example/r")
    first = text.splitlines()[0]
    assert "(https://tokspeed.example/r)" in first
    alerts = section(text, f"Alerts of the month ({summary.SHOWN + 4})")
    assert alerts.count("\n- #") == summary.SHOWN and alerts.endswith("… 4 more in the report")
