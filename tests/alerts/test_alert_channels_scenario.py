"""Done means: an alert raised by real runs against the simulator reaches email and Slack-,
Teams-, PagerDuty- and webhook-shaped receivers exactly once each; acknowledging it pages nobody
again; its resolution resolves the PagerDuty incident (same dedup key)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings

from alerts.delivery.channels import secrets
from alerts.lifecycle.actions import perform
from alerts.models import Alert, Channel, Kind, Service, Status
from tests.alerts.test_alert_scenarios import T0, fs_broker, real_run, send, series, smtp  # noqa: F401
from tests.channel_receivers import receivers

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SLACK = "https://hooks.slack.com/services/T0001/B0002/abcdefghijklmnopqrstuvwx"


def channel(service: str, address: str) -> Channel:
    made = Channel(name=service, service=service)
    secrets.set_address(made, address)
    if made.signed:
        secrets.new_signing_secret(made)
    made.save()
    return made


def test_it_reaches_every_channel_once_and_resolves_the_pagerduty_incident(
    series,  # noqa: F811
    fs_broker,  # noqa: F811
    smtp,  # noqa: F811
    monkeypatch,
    tmp_path,
) -> None:
    with receivers(monkeypatch, tmp_path) as rx, override_settings(CHANNELS_TIMEOUT_S=5.0):
        channel(Service.SLACK, SLACK)
        channel(Service.TEAMS, f"workflows://{rx.secure.split('//')[1]}/wf123/sig456")
        channel(Service.PAGERDUTY, "R0UT1NGKEY0123456789abcdef")
        channel(Service.WEBHOOK, f"{rx.base}/hook")
        real_run(series, T0, fs_broker)
        provider = series["endpoint"].provider
        provider.extra_headers = {"x-sim-fault": "529"}  # the provider answers 529 overloaded
        provider.save()
        real_run(series, T0 + timedelta(hours=8), fs_broker)
        assert not Alert.objects.exists(), "one failed run is not an outage (docs/alerts.md)"
        real_run(series, T0 + timedelta(hours=16), fs_broker)
        alert = Alert.objects.get()
        assert alert.kind == Kind.OUTAGE
        assert len(send()) == 5 and send() == [], "one email and four posts, once"
        paths = ("/slack/", "/workflows/", "/pagerduty/", "/hook")
        assert {p: len(rx.at(p)) for p in paths} == dict.fromkeys(paths, 1)
        assert len(smtp.messages) == 1
        (trigger,) = rx.at("/pagerduty/")
        assert trigger.json["event_action"] == "trigger"
        assert trigger.json["dedup_key"] == f"tokspeed-alert-{alert.id}"
        assert "outage" in trigger.json["payload"]["summary"]
        assert "outage" in str(rx.at("/slack/")[0].json["attachments"][0]["blocks"])

        perform(alert.id, "acknowledge", user=None)
        assert send() == [], "acknowledging in tokspeed pages nobody again"

        provider.extra_headers = {}
        provider.save()
        for hours in (24, 32, 40):
            real_run(series, T0 + timedelta(hours=hours), fs_broker)
            alert.refresh_from_db()
            if alert.status == Status.RESOLVED:
                break
        assert alert.status == Status.RESOLVED
        assert len(send()) == 5 and send() == []
        resolve = rx.at("/pagerduty/")[1]
        assert resolve.json == {
            "routing_key": "R0UT1NGKEY0123456789abcdef",
            "event_action": "resolve",
            "dedup_key": f"tokspeed-alert-{alert.id}",
        }
        assert {p: len(rx.at(p)) for p in paths} == dict.fromkeys(paths, 2)
        assert rx.at("/hook")[1].json["type"] == "alert.resolved"
        assert len(smtp.messages) == 2
