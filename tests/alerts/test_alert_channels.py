"""Channels: alerts posted to Slack-, Teams-, Discord-, PagerDuty-, Opsgenie-, ntfy- and
webhook-shaped receivers on loopback through the one outbox (apprise's service URLs pointed at
loopback), signed webhooks checked by an independent HMAC, retries, timeouts, races, secrets."""

from __future__ import annotations

import logging
import re
import threading
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as crypto_hmac
from django.db import connection
from django.test import override_settings

from alerts.channel_forms import ChannelForm
from alerts.delivery import outbox
from alerts.delivery.channels import secrets
from alerts.delivery.channels.testing import send_test
from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.models import Alert, Channel, Delivery, Notification, Service, Subscription, Topic
from alerts.testing import daily_slots, store_history, store_run
from tests.alerts.test_alert_emails import BASE_URL, T0, body, make_series, regress, smtp_sink
from tests.channel_receivers import Receiver, receivers

SLACK = "https://hooks.slack.com/services/T0001/B0002/abcdefghijklmnopqrstuvwx"
DISCORD = "https://discord.com/api/webhooks/123456/abcdefghijklmnop"


# Any instant before now: a claim whose backoff ended there is due again.
LEASE_OVER = datetime(2000, 1, 1, tzinfo=UTC)


@pytest.fixture
def receiver(monkeypatch, tmp_path):
    with (
        receivers(monkeypatch, tmp_path) as r,
        override_settings(TOKSPEED_BASE_URL=BASE_URL, ALERT_EMAILS=[], CHANNELS_TIMEOUT_S=2.0),
    ):
        yield r


def channel(service: str, address: str, *, name: str = "", **fields) -> Channel:
    made = Channel(name=name or service, service=service, **fields)
    secrets.set_address(made, address)
    if made.signed:
        secrets.new_signing_secret(made)
    made.save()
    return made


def send() -> outbox.DeliveryReport:
    outbox.dispatch(Delivery.IMMEDIATE)
    return outbox.deliver()


def verify(secret: str, header: str, body: bytes) -> int:
    """An independent check of X-Tokspeed-Signature (cryptography's HMAC, not hmac): returns t."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    mac = crypto_hmac.HMAC(secret.encode(), hashes.SHA256())
    mac.update(parts["t"].encode() + b"." + body)
    mac.verify(bytes.fromhex(parts["v1"]))  # raises InvalidSignature
    return int(parts["t"])


@pytest.mark.django_db
def test_it_posts_an_alert_to_each_chat_service_in_its_own_shape_once(receiver: Receiver):
    channel(Service.SLACK, SLACK)
    channel(Service.TEAMS, f"workflows://{receiver.secure.split('//')[1]}/wf123/sig456")
    channel(Service.DISCORD, DISCORD)
    channel(Service.NTFY, f"ntfy://{receiver.base.split('//')[1]}/tokspeed-alerts")
    hook = channel(Service.WEBHOOK, f"{receiver.base}/hook")
    channel(Service.PAGERDUTY, "R0UT1NGKEY0123456789abcdef")
    channel(Service.OPSGENIE, "0psg3n1e-key-0123456789")
    regress(make_series())
    alert = Alert.objects.get()
    assert alert.severity == "major", "a 30 % slowdown is major: the pagers are triggered"
    report = send()
    assert len(report.sent) == 7 and not report.failed, report
    assert send().sent == [], "a second pass sends nothing"
    by_path = {prefix: receiver.at(prefix) for prefix in ("/slack/", "/workflows/", "/discord/")}
    by_path["/hook"] = receiver.at("/hook")
    by_path["ntfy"] = [
        r for r in receiver.requests if b"tokspeed-alerts" in r.path.encode() + r.body
    ]
    assert {p: len(r) for p, r in by_path.items()} == dict.fromkeys(by_path, 1)
    slack = by_path["/slack/"][0]
    assert slack.path == "/slack/T0001/B0002/abcdefghijklmnopqrstuvwx"
    blocks = slack.json["attachments"][0]["blocks"]
    assert blocks[0]["type"] == "header" and len(blocks[0]["text"]["text"]) <= 150
    text = str(blocks)
    assert "llama-3-70b @ Acme" in text and "slower" in text and "Baseline" in text, text
    assert f"<{BASE_URL}/alerts/" in text and "|This alert>" in text, "Slack-style links"
    assert "18–24 UTC" in text, "the time-of-day table, in short"
    card = by_path["/workflows/"][0].json
    assert card["attachments"][0]["content"]["type"] == "AdaptiveCard"
    assert "llama-3-70b @ Acme" in str(card)
    (body,) = [b["text"] for b in card["attachments"][0]["content"]["body"] if b["id"] == "body"]
    # Teams shows a lone newline in a card's TextBlock as a space (it needs a blank line).
    assert "\n\n**Baseline" in body and "\n\n18–24 UTC" in body, "one fact per line in Teams"
    assert re.search(r"(?<!\n)\n(?!\n)", body) is None, body
    assert "llama-3-70b @ Acme" in str(by_path["/discord/"][0].json)
    (page,) = receiver.at("/pagerduty/")
    assert page.json["event_action"] == "trigger"
    assert page.json["dedup_key"] == f"tokspeed-alert-{alert.id}"
    (genie,) = receiver.at("/opsgenie/")
    assert genie.json["alias"] == f"tokspeed-alert-{alert.id}"
    assert genie.headers["Authorization"] == "GenieKey 0psg3n1e-key-0123456789"
    webhook = by_path["/hook"][0]
    document = webhook.json
    assert document["type"] == "alert.opened" and document["alert"]["provider"] == "acme"
    assert document["alert"]["shift"] > 0.2 and document["alert"]["baseline_median"] > 60
    verify(secrets.signing_secret(hook), webhook.headers["X-Tokspeed-Signature"], webhook.body)


@pytest.mark.django_db
def test_it_routes_by_topic_provider_and_severity(receiver: Receiver):
    acme, globex = make_series("acme"), make_series("globex", vantage="us")
    only_acme = channel(Service.WEBHOOK, f"{receiver.base}/hook/acme", name="acme")
    only_acme.providers.add(acme["endpoint"].provider)
    channel(Service.WEBHOOK, f"{receiver.base}/hook/outages", topics=[Topic.OUTAGE])
    channel(Service.WEBHOOK, f"{receiver.base}/hook/major", min_severity="major")
    regress(acme)
    regress(globex, seed=5)
    send()
    acme_posts = receiver.at("/hook/acme")
    assert [p.json["alert"]["provider"] for p in acme_posts] == ["acme"]
    assert receiver.at("/hook/outages") == [], "a regression is not an outage"
    severities = {p.json["alert"]["severity"] for p in receiver.at("/hook/major")}
    assert severities <= {"major"}


@pytest.mark.django_db
def test_it_signs_webhooks_with_a_timestamp_against_replay(receiver: Receiver):
    hook = channel(Service.WEBHOOK, f"{receiver.base}/hook")
    with time_machine.travel(T0, tick=False):
        sent = send_test(hook)
    assert sent.sent_at is not None, sent.last_error
    (post,) = receiver.at("/hook")
    signed_at = verify(
        secrets.signing_secret(hook), post.headers["X-Tokspeed-Signature"], post.body
    )
    assert signed_at == int(T0.timestamp()), "the signature carries the time it was made"
    assert post.json["type"] == "test" and post.headers["X-Tokspeed-Event"] == "test"
    with pytest.raises(Exception, match="Signature"):
        verify(secrets.signing_secret(hook), post.headers["X-Tokspeed-Signature"], post.body + b" ")
    replayed = post.headers["X-Tokspeed-Signature"].replace(f"t={signed_at}", f"t={signed_at + 1}")
    with pytest.raises(Exception, match="Signature"):
        verify(secrets.signing_secret(hook), replayed, post.body)


@pytest.mark.django_db
def test_it_retries_a_receiver_that_answers_500_then_200(receiver: Receiver):
    channel(Service.SLACK, SLACK)
    receiver.script["/slack/"] = [500]
    regress(make_series())
    first = send()
    assert first.sent == [] and first.failed == [] and first.retry_in_s == 30
    row = Notification.objects.get()
    assert "HTTP 500" in row.last_error and row.sent_at is None
    assert outbox.deliver().sent == [], "held back until the backoff ends"
    Notification.objects.update(claimed_until=LEASE_OVER)  # the backoff has run out
    assert outbox.deliver().sent == [row.id]
    assert len(receiver.at("/slack/")) == 2 and outbox.deliver().sent == []
    assert Channel.objects.get().failures == 0, "one success mends the channel"


@pytest.mark.django_db
def test_it_times_out_on_a_receiver_that_hangs_and_loses_nothing(receiver: Receiver):
    hook = channel(Service.WEBHOOK, f"{receiver.base}/hook")
    receiver.script["/hook"] = ["hang"]
    with override_settings(CHANNELS_TIMEOUT_S=0.5):
        sent = send_test(hook)
        assert sent.sent_at is None and "no answer within 0.5 s" in sent.last_error
        regress(make_series())
        outbox.dispatch(Delivery.IMMEDIATE)
        receiver.script["/hook"] = ["hang"]
        report = outbox.deliver()
    assert report.sent == [] and report.retry_in_s == 30
    Notification.objects.update(claimed_until=LEASE_OVER)  # the backoff has run out
    assert len(outbox.deliver().sent) == 1
    assert [p.json["type"] for p in receiver.at("/hook")] == ["alert.opened"]


@pytest.mark.django_db
def test_it_gives_up_on_a_revoked_address_and_marks_the_channel_broken(receiver: Receiver):
    slack = channel(Service.SLACK, SLACK)
    receiver.script["/slack/"] = [404, 404]
    with override_settings(CHANNELS_BROKEN_AFTER=2):
        first = send_test(slack)
        send_test(slack)
    assert first.failed_at and "HTTP 404" in first.last_error
    slack.refresh_from_db()
    assert slack.broken_at is not None and slack.failures == 2
    assert send_test(slack).sent_at is not None
    slack.refresh_from_db()
    assert slack.broken_at is None, "a channel that works again is no longer broken"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_never_posts_twice_with_two_senders_racing(receiver: Receiver):
    hook = channel(Service.WEBHOOK, f"{receiver.base}/hook")
    rows = [
        Notification.objects.create(channel=hook, delivery=Delivery.IMMEDIATE) for _ in range(12)
    ]
    start = threading.Barrier(2)
    reports = []

    def sender() -> None:
        start.wait()
        try:
            reports.append(outbox.deliver())
        finally:
            connection.close()

    threads = [threading.Thread(target=sender) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    delivered = sorted(int(p.headers["X-Tokspeed-Delivery"]) for p in receiver.at("/hook"))
    assert delivered == sorted(r.id for r in rows), "each row posted exactly once"
    assert sorted(i for r in reports for i in r.sent) == delivered


@pytest.mark.django_db
def test_it_never_shows_or_logs_the_address(receiver: Receiver, admin_client, caplog):
    slack = channel(Service.SLACK, SLACK, name="team slack")
    assert SLACK not in slack.secret_encrypted and slack.secret_hint.endswith("uvwx")
    receiver.script["/slack/"] = [500]
    with caplog.at_level(logging.DEBUG):
        failed = send_test(slack)
    assert "HTTP 500" in failed.last_error
    hidden = SLACK.rsplit("/", 1)[1]
    assert hidden not in caplog.text and hidden not in failed.last_error
    for page in ("/alerts/channels/", f"/alerts/channels/{slack.id}/", "/admin/alerts/channel/"):
        html = admin_client.get(page).content.decode()
        assert "team slack" in html or "Stored address" in html, page
        assert hidden not in html, f"{page} shows the address"
    assert "…uvwx" in admin_client.get("/alerts/channels/").content.decode()
    pressed = admin_client.post(f"/alerts/channels/{slack.id}/test/", follow=True)
    assert "Test notification sent to “team slack”" in pressed.content.decode()


@pytest.mark.django_db
def test_it_checks_the_address_before_saving():
    form = ChannelForm(
        {
            "name": "x",
            "service": Service.SLACK,
            "address": "https://example.com/x",
            "topics": [Topic.REGRESSION],
            "min_severity": "minor",
        }  # fmt: skip
    )
    assert not form.is_valid() and "address" in form.errors
    nul = ChannelForm(
        {
            "name": "x",
            "service": Service.WEBHOOK,
            "address": "https://a.example/\x00",
            "topics": [Topic.REGRESSION],
            "min_severity": "minor",
        }  # fmt: skip
    )
    assert not nul.is_valid() and "Null characters" in str(nul.errors["address"])
    good = ChannelForm(
        {
            "name": "hook",
            "service": Service.WEBHOOK,
            "address": "https://a.example/hook",
            "topics": [Topic.REGRESSION],
            "min_severity": "minor",
            "active": "on",
        }  # fmt: skip
    )
    assert good.is_valid(), good.errors
    saved = good.save()
    assert good.new_signing_secret.startswith("whsec_")
    assert secrets.address(saved) == "https://a.example/hook"


@pytest.mark.django_db
def test_it_manages_channels_through_the_api_without_showing_the_address(
    receiver: Receiver, admin_client, client, django_user_model
):
    body = {
        "name": "team hook",
        "service": "webhook",
        "address": f"{receiver.base}/hook/secret-path-0123",
        "topics": ["regression", "outage"],
        "min_severity": "minor",
    }
    made = admin_client.post("/api/v1/channels/", body, content_type="application/json")
    assert made.status_code == 201, made.content
    assert "secret-path" not in made.content.decode() and made.json()["secret_hint"].endswith(
        "0123"
    )
    secret = made.json()["signing_secret"]
    listed = admin_client.get("/api/v1/channels/").content.decode()
    assert "secret-path" not in listed and secret not in listed, "shown once, never again"
    tested = admin_client.post(f"/api/v1/channels/{made.json()['id']}/test/")
    assert tested.status_code == 200 and tested.json() == {"sent": True, "error": ""}
    (post,) = receiver.at("/hook/secret-path-0123")
    verify(secret, post.headers["X-Tokspeed-Signature"], post.body)
    bad = admin_client.post(
        "/api/v1/channels/",
        {**body, "service": "slack", "address": "not a webhook"},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "address" in bad.json()
    client.force_login(django_user_model.objects.create_user("reader", "r@team.example"))
    assert client.get("/api/v1/channels/").status_code == 403, "operators only"


@pytest.mark.django_db
def test_it_posts_one_daily_digest_to_a_digest_channel(receiver: Receiver):
    channel(Service.WEBHOOK, f"{receiver.base}/hook", topics=[Topic.DIGEST])
    regress(make_series())
    regress(make_series("globex", vantage="us"), seed=7)
    assert send().sent == [], "a digest-only channel gets nothing at once"
    outbox.dispatch(Delivery.DIGEST)
    assert len(outbox.deliver().sent) == 1
    (digest,) = receiver.at("/hook")
    assert digest.json["type"] == "digest"
    assert {a["id"] for a in digest.json["alerts"]} == set(
        Notification.objects.get().events.values_list("alert_id", flat=True)
    )
    assert "Acme" in digest.json["text"] and "Globex" in digest.json["text"]
    outbox.dispatch(Delivery.DIGEST)
    assert outbox.deliver().sent == [], "one digest, once"


@pytest.mark.django_db
def test_it_reads_an_address_from_a_named_environment_variable(receiver: Receiver, monkeypatch):
    form = ChannelForm(
        {
            "name": "from env",
            "service": Service.SLACK,
            "secret_env": "TEAM_SLACK_HOOK",
            "topics": [Topic.REGRESSION],
            "min_severity": "minor",
            "active": "on",
        }  # fmt: skip
    )
    assert form.is_valid(), form.errors
    saved = form.save()
    assert saved.secret_encrypted == "" and saved.secret_hint == "$TEAM_SLACK_HOOK"  # noqa: S105
    missing = send_test(saved)
    assert missing.sent_at is None and "TEAM_SLACK_HOOK is not set" in missing.last_error
    monkeypatch.setenv("TEAM_SLACK_HOOK", SLACK)
    assert send_test(saved).sent_at is not None
    assert receiver.at("/slack/T0001/B0002/"), "posted to the address the variable holds"


def outage(series: dict, seed: int) -> Alert:
    """Three good days, then two runs whose every request failed: an outage (docs/alerts.md)."""
    store_history(**series, slots=daily_slots(end=T0, days=3), decode=lambda s: 70.0,
                  ttft=lambda s: 600.0, seed=seed)  # fmt: skip
    for hours in (8, 16):
        failed = store_run(**series, slot=T0 + timedelta(hours=hours), decode=[], ttft=[],
                           errors=["overloaded"] * 5)  # fmt: skip
        evaluate_after_run(failed.id)
    return Alert.objects.get(endpoint=series["endpoint"])


@pytest.mark.django_db
def test_it_routes_pagerduty_for_production_outages_slack_for_regressions_email_the_rest(
    receiver: Receiver, django_user_model
):
    """Done means: three rows route it: PagerDuty for outages of production endpoints, Slack for
    every regression, an email digest for the rest."""
    prod_a, prod_b = make_series("acme"), make_series("initech")
    staging = make_series("globex", vantage="us")
    pager = channel(Service.PAGERDUTY, "R0UT1NGKEY0123456789abcdef", topics=[Topic.OUTAGE])
    pager.endpoints.add(prod_a["endpoint"], prod_b["endpoint"])
    channel(Service.SLACK, SLACK, topics=[Topic.REGRESSION])
    ana = django_user_model.objects.create_user("ana", "ana@team.example", "pw")
    Subscription.objects.create(
        user=ana, email="ana@team.example", confirmed_at=T0, delivery=Delivery.DIGEST
    )
    with smtp_sink(ALERT_EMAILS=[]) as smtp:
        regress(prod_a)
        production, elsewhere = outage(prod_b, seed=3), outage(staging, seed=4)
        send()
        (page,) = receiver.at("/pagerduty/")
        assert page.json["dedup_key"] == f"tokspeed-alert-{production.id}", "prod outage only"
        assert elsewhere.kind == "outage" and len(receiver.at("/slack/")) == 1
        assert "llama-3-70b @ Acme" in str(receiver.at("/slack/")[0].json), "the regression"
        assert smtp.messages == [], "the email subscriber waits for the digest"
        outbox.dispatch(Delivery.DIGEST)
        outbox.deliver()
    (digest,) = smtp.to("ana@team.example")
    text = body(digest, "plain")
    assert all(name in text for name in ("@ Acme", "@ Initech", "@ Globex")), text


@pytest.mark.django_db
def test_it_tests_a_pager_without_leaving_an_incident_open(receiver: Receiver):
    pager = channel(Service.PAGERDUTY, "R0UT1NGKEY0123456789abcdef")
    assert send_test(pager).sent_at is not None
    trigger, resolve = receiver.at("/pagerduty/")
    assert (trigger.json["event_action"], resolve.json["event_action"]) == ("trigger", "resolve")
    assert trigger.json["dedup_key"] == resolve.json["dedup_key"], "the same incident, resolved"
    assert "test notification" in trigger.json["payload"]["summary"]
