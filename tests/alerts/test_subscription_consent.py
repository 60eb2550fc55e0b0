"""Subscribing an address needs that address's consent (a signed link emailed to it through a
real SMTP server); nobody can lift another person's unsubscribe; email links expire."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.urls import reverse

from alerts.delivery.recipients import Audience
from alerts.delivery.tokens import unsubscribe_token
from alerts.models import EmailOptOut, Subscription
from tests.alerts.test_alert_emails import BASE_URL, smtp_sink

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)


@pytest.fixture
def ana(django_user_model):
    return django_user_model.objects.create_user("ana", "ana@team.example", "pw")


def subscribe(client, email: str):
    return client.post(
        reverse("alerts:subscription_new"),
        {"email": email, "min_severity": "minor", "delivery": "immediate", "active": "on"},
        follow=True,
    )


def confirmation_link(message) -> str:
    text = message.get_body(("plain",)).get_content()
    (url,) = re.findall(rf"{re.escape(BASE_URL)}(/alerts/subscriptions/confirm/\S+/)", text)
    return url


def subscribed() -> set[str]:
    return {s.email for s in Audience().subscriptions}


def test_it_sends_nothing_to_another_address_until_it_confirms(client, ana):
    client.force_login(ana)
    with smtp_sink() as sink, time_machine.travel(T0):
        page = subscribe(client, "Boss@Elsewhere.example")
        assert "We emailed boss@elsewhere.example a link to confirm" in page.content.decode()
        assert "waiting for boss@elsewhere.example to confirm" in page.content.decode()
        assert subscribed() == set()
        (message,) = sink.to("boss@elsewhere.example")
        assert (
            "ana asked tokspeed to send alert emails" in message.get_body(("plain",)).get_content()
        )
        link = confirmation_link(message)
        client.logout()  # the address's owner has no account here
        assert b"Confirm only if you want them" in client.get(link).content
        assert subscribed() == set()  # opening the link (a mail scanner) confirms nothing
        done = client.post(link)
        assert done.status_code == 200 and b"Confirmed" in done.content
        assert subscribed() == {"boss@elsewhere.example"}
        assert b"Already confirmed" in client.post(link).content


def test_it_confirms_the_accounts_own_address_at_once(client, ana):
    client.force_login(ana)
    with smtp_sink() as sink:
        subscribe(client, "ana@team.example")
        assert sink.messages == []
    assert subscribed() == {"ana@team.example"}


def test_it_never_lifts_another_persons_unsubscribe(client, ana, django_user_model):
    EmailOptOut.objects.create(email="bo@team.example")  # Bo used an unsubscribe link
    client.force_login(ana)
    with smtp_sink() as sink, time_machine.travel(T0):
        subscribe(client, "bo@team.example")
        assert EmailOptOut.objects.filter(email="bo@team.example").exists()
        assert subscribed() == set()
        # Bo himself, logged in, re-subscribing his own address: still only through the link.
        bo = django_user_model.objects.create_user("bo", "bo@team.example", "pw")
        client.force_login(bo)
        subscribe(client, "bo@team.example")
        assert EmailOptOut.objects.filter(email="bo@team.example").exists()
        links = [confirmation_link(m) for m in sink.to("bo@team.example")]
        assert len(links) == 2
        client.post(links[1])  # Bo's own subscription, confirmed by Bo's mailbox
    assert not EmailOptOut.objects.filter(email="bo@team.example").exists()
    assert Subscription.objects.get(user=bo).confirmed_at is not None
    assert Subscription.objects.get(user=ana).confirmed_at is None  # Ana's still waits


def test_it_voids_a_confirmation_link_when_the_address_changes(client, ana):
    client.force_login(ana)
    with smtp_sink() as sink, time_machine.travel(T0):
        subscribe(client, "old@elsewhere.example")
        link = confirmation_link(sink.to("old@elsewhere.example")[0])
        subscription = Subscription.objects.get()
        client.post(
            reverse("alerts:subscription_edit", args=[subscription.id]),
            {"email": "new@elsewhere.example", "min_severity": "minor",
             "delivery": "immediate", "active": "on"},
        )  # fmt: skip
        gone = client.post(link)
    assert gone.status_code == 400 and b"no longer exists" in gone.content
    assert subscribed() == set()


def test_it_expires_confirmation_and_unsubscribe_links_with_a_clear_page(client, ana, settings):
    client.force_login(ana)
    with smtp_sink() as sink, time_machine.travel(T0):
        subscribe(client, "boss@elsewhere.example")
        link = confirmation_link(sink.to("boss@elsewhere.example")[0])
        unsubscribe = reverse("alerts:unsubscribe", args=[unsubscribe_token("ana@team.example")])
    with time_machine.travel(T0 + timedelta(days=settings.ALERTS_CONFIRM_MAX_AGE_DAYS, hours=1)):
        expired = client.post(link)
        assert expired.status_code == 400 and b"confirmation link has expired" in expired.content
        assert client.get(unsubscribe).status_code == 200  # a month-long lifetime
    with time_machine.travel(T0 + timedelta(days=settings.ALERTS_LINK_MAX_AGE_DAYS, hours=1)):
        expired = client.post(unsubscribe)
        assert expired.status_code == 400 and b"unsubscribe link has expired" in expired.content
    assert not EmailOptOut.objects.exists() and subscribed() == set()


def test_it_refuses_a_tampered_confirmation_link(client, ana):
    client.force_login(ana)
    with smtp_sink() as sink:
        subscribe(client, "boss@elsewhere.example")
        link = confirmation_link(sink.to("boss@elsewhere.example")[0])
    response = client.post(link.replace(":", "x:", 1))
    assert response.status_code == 400 and b"not valid" in response.content
    assert subscribed() == set()


def test_it_sends_an_unverified_address_at_most_three_confirmations_an_hour(client, ana):
    from django.core.cache import cache

    cache.clear()
    client.force_login(ana)
    with smtp_sink() as sink:
        subscribe(client, "stranger@elsewhere.example")
        subscription = Subscription.objects.get(email="stranger@elsewhere.example")
        url = reverse("alerts:subscription_resend", args=[subscription.id])
        pages = [client.post(url, follow=True) for _ in range(10)]
        sent = sink.to("stranger@elsewhere.example")
    cache.clear()
    assert len(sent) == 1 + 3, f"{len(sent)} emails to an address that never confirmed"
    assert b"already went to stranger@elsewhere.example" in pages[-1].content
