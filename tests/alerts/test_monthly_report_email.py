"""The monthly report by email: on the 1st the beat's task queues it once per subscriber of the
topic through the one outbox, a real SMTP server on loopback receives it (plain text and HTML),
and a second pass sends nothing again; `manage.py monthly_report` prints it on demand."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command

from alerts.delivery import outbox
from alerts.models import EmailOptOut, Notification, Subscription, Topic
from alerts.monthly.month import Month
from alerts.monthly.send import monthly_email
from alerts.tasks import monthly_report
from tests import monthly_data
from tests.alerts.test_alert_emails import body, smtp_sink
from tokspeed.celery import app as celery_app

pytestmark = pytest.mark.django_db

FIRST_OF_JULY = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)  # July 1 or 2 in every TIME_ZONE


def subscribe(email: str, topics: list[str], *, confirmed: bool = True) -> None:
    Subscription.objects.create(
        email=email, topics=topics, confirmed_at=FIRST_OF_JULY if confirmed else None
    )


def test_it_emails_the_report_once_per_subscriber_on_the_first(settings):
    with time_machine.travel(monthly_data.NOW, tick=False):
        seeded = monthly_data.seed_year(days=70)
    subscribe("ana@team.example", [Topic.MONTHLY, Topic.REGRESSION])
    subscribe("bo@team.example", [Topic.REGRESSION])  # alerts only
    subscribe("cy@team.example", [Topic.MONTHLY], confirmed=False)  # never confirmed
    subscribe("gone@team.example", [Topic.MONTHLY])
    EmailOptOut.objects.create(email="gone@team.example")
    with smtp_sink() as sink, time_machine.travel(FIRST_OF_JULY, tick=False):
        monthly_report()
        monthly_report()  # the beat's second chance (the 2nd), or a redelivered task
        queued = Notification.objects.filter(report_month__isnull=False)
        assert list(queued.values_list("email", "report_month")) == [
            ("ana@team.example", Month(2026, 6).first_day)
        ]
        outbox.deliver()
        monthly_report()
        outbox.deliver()
    assert [m["To"] for m in sink.messages] == ["ana@team.example"]
    message = sink.messages[0]
    assert message["Subject"] == "[tokspeed] Monthly report, June 2026"
    text, html = body(message, "plain"), body(message, "html")
    for ep in seeded["endpoints"]:
        assert ep.label in text and ep.label in html
    assert "Acme support" in text and seeded["mark"] not in text + html
    assert f"#{seeded['resolved'].id}" in text and "resolved" in text
    assert "/reports/monthly/2026-06/" in text and "/unsubscribe/" in text
    assert message["List-Unsubscribe"]


def test_it_is_on_the_beat_on_the_first_and_second_of_each_month():
    entry = celery_app.conf.beat_schedule["alerts-monthly-report"]
    assert entry["task"] == monthly_report.name
    assert entry["schedule"].day_of_month == {1, 2}


def test_it_prints_a_month_on_demand_and_refuses_a_bad_one():
    out = StringIO()
    with time_machine.travel(FIRST_OF_JULY, tick=False):
        call_command("monthly_report", month="2019-02", stdout=out)
    assert "There is no data for February 2019" in out.getvalue()
    with pytest.raises(CommandError, match="yyyy-mm"):
        call_command("monthly_report", month="2026-13")


@pytest.mark.parametrize(
    ("zone", "start"),
    [
        ("UTC", datetime(2026, 6, 1, 0, 0, tzinfo=UTC)),
        ("America/New_York", datetime(2026, 6, 1, 4, 0, tzinfo=UTC)),
        ("Asia/Tokyo", datetime(2026, 5, 31, 15, 0, tzinfo=UTC)),
    ],
)
def test_it_takes_months_in_the_installs_time_zone(settings, zone, start):
    settings.TIME_ZONE = zone
    june = Month(2026, 6)
    assert june.start == start and june.end == Month(2026, 7).start
    with time_machine.travel(datetime(2026, 7, 1, 2, 0, tzinfo=UTC), tick=False):
        # 2 a.m. UTC on July 1 is still June 30 in New York.
        expected = Month(2026, 5) if zone == "America/New_York" else june
        assert Month.last_complete() == expected


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris"])
def test_it_tells_its_alert_times_in_utc_as_the_page_does(settings, client, zone):
    """Whatever TIME_ZONE the months are cut in, the alerts' times are UTC and say so."""
    settings.TIME_ZONE = zone
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    with time_machine.travel(monthly_data.NOW, tick=False):
        seeded = monthly_data.seed_year(days=1)
        message = monthly_email(
            Notification(email="ana@team.example", report_month=Month(2026, 6).first_day)
        )
        page = client.get("/reports/monthly/2026-06/").content.decode()
    [(html, _)] = message.alternatives
    alert = seeded["resolved"]
    for view, said in (("plain text", message.body), ("HTML", html), ("page", page)):
        line = next(
            line for line in said.splitlines() if f"#{alert.id}" in line and "opened" in line
        )
        assert "opened 15 Jun 12:00 UTC: resolved 17 Jun 12:00 UTC" in line, (view, line)
