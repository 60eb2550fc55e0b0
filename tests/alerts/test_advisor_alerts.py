""" "The advice changed": hysteresis over two evaluations, one email per change to each subscriber,
through the one outbox."""

from datetime import timedelta

import pytest
import time_machine
from django.core import mail

from advisor.models import WorkloadProfile
from alerts.delivery import advice_changes, outbox
from alerts.delivery.advice_changes import Hold, hold_after
from alerts.models import AdviceChange, EmailOptOut
from tests import advisor_data as seed

pytestmark = pytest.mark.django_db


def test_it_sets_a_baseline_silently_and_needs_two_evaluations_in_a_row():
    hold, changed = hold_after(Hold(None), 1, first=True)
    assert hold == Hold(1) and not changed
    hold, changed = hold_after(hold, 2, first=False)
    assert hold == Hold(1, challenger=2, count=1) and not changed
    hold, changed = hold_after(hold, 2, first=False)
    assert hold == Hold(2) and changed


def test_it_does_not_alert_on_a_flip_that_flips_back():
    hold, _ = hold_after(Hold(1), 2, first=False)
    hold, changed = hold_after(hold, 1, first=False)
    assert hold == Hold(1) and not changed
    hold, changed = hold_after(hold, 2, first=False)
    assert not changed  # the streak started again
    hold, changed = hold_after(hold, None, first=False)  # no advice: nothing changes
    assert hold == Hold(1, challenger=2, count=1) and not changed


def slow_down(endpoint, at):
    figures = {"ttft_ms": 5000, "decode_tps": 10}
    seed.finished(seed.data.run(endpoint, at, summary=seed.summary(**figures), **figures))


def test_it_emails_subscribers_a_before_after_table_when_the_advice_changed():
    profile, fast, cheap, lonely = seed.world()
    WorkloadProfile.objects.exclude(id=profile.id).delete()  # only this profile's email
    assert advice_changes.evaluate_all(now=seed.NOW) == []  # baseline: Fast
    slow_down(fast, seed.NOW + timedelta(hours=1))
    assert advice_changes.evaluate_all(now=seed.NOW + timedelta(hours=2)) == []  # once
    # Re-reading the same runs is not a second evaluation.
    assert advice_changes.evaluate_all(now=seed.NOW + timedelta(hours=3)) == []
    slow_down(fast, seed.NOW + timedelta(hours=4))
    (change,) = advice_changes.evaluate_all(now=seed.NOW + timedelta(hours=5))
    assert (change.before, change.after) == (fast, lonely)

    outbox.dispatch_advice()
    assert len(outbox.deliver().sent) == 2
    assert sorted(m.to[0] for m in mail.outbox) == ["lead@example.com", "ops@example.com"]
    email = mail.outbox[0]
    assert not email.bcc, "each subscriber gets their own email, with their own unsubscribe link"
    assert "/alerts/unsubscribe/" in email.body and email.extra_headers["List-Unsubscribe"]
    assert email.subject == ("[tokspeed] Advice changed for Chat: Fast @ Fastco → Lonely @ Otherco")
    before, after = email.body.split("\nBefore\n")[1].split("\nAfter\n")
    assert "Fast @ Fastco (recommended)" in before and "2.3 s" in before
    assert "Lonely @ Otherco (recommended)" in after
    assert change.reason in email.body
    assert "/advisor/chat/" in email.body
    assert outbox.dispatch_advice() == [] and outbox.deliver().sent == []  # sent once
    assert len(mail.outbox) == 2
    assert AdviceChange.objects.get().notified_at is not None


def test_it_leaves_out_addresses_that_unsubscribed():
    profile, fast, cheap, lonely = seed.world()
    WorkloadProfile.objects.exclude(id=profile.id).delete()
    EmailOptOut.objects.create(email="ops@example.com")
    advice_changes.evaluate_all(now=seed.NOW)
    for hours in (1, 3):
        slow_down(fast, seed.NOW + timedelta(hours=hours))
        advice_changes.evaluate_all(now=seed.NOW + timedelta(hours=hours + 1))
    outbox.dispatch_advice()
    outbox.deliver()
    (email,) = mail.outbox
    assert email.to == ["lead@example.com"], "the address that unsubscribed is left out"


def test_it_posts_the_advice_change_to_channels_and_pushes_the_feed_to_a_router(
    monkeypatch, tmp_path
):
    from alerts.delivery.channels import secrets
    from alerts.models import Channel, Service, Topic
    from tests.alerts.test_alert_channels import verify
    from tests.channel_receivers import receivers

    profile, fast, cheap, lonely = seed.world()
    WorkloadProfile.objects.exclude(id=profile.id).delete()
    # The router's feed is the advice as it stands when it is sent: sent just after the change.
    sent_at = time_machine.travel(seed.NOW + timedelta(hours=4, minutes=5))
    with receivers(monkeypatch, tmp_path) as rx, sent_at:
        made = {}
        for service, path in ((Service.WEBHOOK, "/hook"), (Service.ROUTER, "/router")):
            made[service] = Channel(name=service, service=service, topics=[Topic.ADVICE])
            made[service].feed = "litellm" if service == Service.ROUTER else ""
            secrets.set_address(made[service], f"{rx.base}{path}")
            secrets.new_signing_secret(made[service])
            made[service].save()
        advice_changes.evaluate_all(now=seed.NOW)
        for hours in (1, 3):
            slow_down(fast, seed.NOW + timedelta(hours=hours))
            advice_changes.evaluate_all(now=seed.NOW + timedelta(hours=hours + 1))
        outbox.dispatch_advice()
        assert len(outbox.deliver().sent) == 4  # two emails, two posts
        (hook,) = rx.at("/hook")
        assert hook.json["type"] == "advice.changed" and hook.json["after"] == "Lonely @ Otherco"
        (push,) = rx.at("/router")
        secret = secrets.signing_secret(made[Service.ROUTER])
        verify(secret, push.headers["X-Tokspeed-Signature"], push.body)
        first = push.json["model_list"][0]["litellm_params"]
        assert first["order"] == 1 and "turbo" in first["model"], "the new advice routes first"


def test_it_lets_a_user_subscribe_to_the_advice_of_one_profile_on_the_page(
    client, django_user_model
):
    from django.urls import reverse

    from alerts.models import Subscription

    profile, fast, cheap, lonely = seed.world()
    WorkloadProfile.objects.exclude(id=profile.id).delete()
    Subscription.objects.all().delete()
    client.force_login(django_user_model.objects.create_user("ana", "ana@team.example"))
    form = {"email": "ana@team.example", "topics": ["advice"], "profiles": [profile.id]}
    saved = client.post(reverse("alerts:subscription_new"), {**form, "min_severity": "minor",
                        "delivery": "immediate", "active": "on"})  # fmt: skip
    assert saved.status_code == 302
    assert (
        "The advice changed (Chat)" in client.get(reverse("alerts:subscriptions")).content.decode()
    )
    advice_changes.evaluate_all(now=seed.NOW)
    for hours in (1, 3):
        slow_down(fast, seed.NOW + timedelta(hours=hours))
        advice_changes.evaluate_all(now=seed.NOW + timedelta(hours=hours + 1))
    outbox.dispatch_advice()
    outbox.deliver()
    assert [m.to for m in mail.outbox] == [["ana@team.example"]]
