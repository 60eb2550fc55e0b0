"""The alert pages: list with tabs and filters, an alert's page, acting on it from an email
link, managing subscriptions, and badges for other pages (selectors)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.test import override_settings
from django.urls import reverse

from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.models import Alert, EventKind, Segment, Status, Subscription
from alerts.pages.selectors import open_alerts_by_endpoint
from alerts.testing import daily_slots, store_history, store_run
from benchmarks.models import Vantage, Workload
from providers.models import Endpoint, Provider

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 10, 18, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _after_the_runs():
    """The pages are read after the stored runs (T0 and the days after it), whatever the wall
    clock says: bin/fake-clock-tests runs this module at instants before T0 too."""
    with time_machine.travel(T0 + timedelta(days=6), tick=False):
        yield


@pytest.fixture
def series():
    provider = Provider.objects.create(
        slug="acme", name="Acme", protocol="openai_chat", base_url="https://acme.example/v1"
    )
    return {
        "endpoint": Endpoint.objects.create(provider=provider, slug="acme-m", model="m-70b"),
        "workload": Workload.objects.create(slug="w", name="Standard prompt"),
        "vantage": Vantage.objects.create(slug="eu", label="EU probe", queue="eu"),
    }


@pytest.fixture
def regression(series) -> Alert:
    """A decode regression opened by real evaluations of stored runs (8 days of history)."""
    store_history(
        **series, slots=daily_slots(end=T0, days=8), decode=lambda s: 70.0, ttft=lambda s: 600.0
    )
    runs = store_history(
        **series,
        slots=[T0 + timedelta(hours=h) for h in (25, 26, 27)],
        decode=lambda s: 49.0,
        ttft=lambda s: 600.0,
        seed=1,
    )
    for run in runs:
        evaluate_after_run(run.id)
    return Alert.objects.get()


@pytest.fixture
def user(django_user_model):
    """An operator: a member of the "operators" group (made by a data migration)."""
    user = django_user_model.objects.create_user("ana", "ana@team.example", "pw")
    user.groups.add(Group.objects.get(name="operators"))
    return user


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user("vic", "vic@team.example", "pw")


def test_it_asks_for_a_login_unless_the_dashboard_is_public(client, regression) -> None:
    page = client.get("/alerts/")
    assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")
    with override_settings(TOKSPEED_PUBLIC_DASHBOARD=True):
        page = client.get("/alerts/")
        assert page.status_code == 200 and regression.subject in page.content.decode()
        assert client.get(f"/alerts/{regression.id}/").status_code == 200


def test_it_lists_open_alerts_and_keeps_closed_ones_in_history(client, user, regression) -> None:
    client.force_login(user)
    text = client.get("/alerts/").content.decode()
    assert regression.subject in text and "Needs attention (1)" in text
    regression.status = Status.RESOLVED
    regression.save()
    assert regression.subject not in client.get("/alerts/").content.decode()
    assert regression.subject in client.get("/alerts/?view=history").content.decode()
    assert regression.subject in client.get("/alerts/?view=history&provider=acme").content.decode()
    assert "No alerts here" in client.get("/alerts/?view=history&severity=minor").content.decode()


def test_it_says_nobody_is_told_without_alert_emails_or_subscribers(client, user, settings):
    settings.ALERT_EMAILS = []
    client.force_login(user)
    page = client.get("/alerts/").content.decode()
    assert 'id="nobody-told"' in page and "ALERT_EMAILS" in page, "silence is not explained"

    Subscription.objects.create(user=user, email="ana@team.example", confirmed_at=T0)
    assert 'id="nobody-told"' not in client.get("/alerts/").content.decode()
    Subscription.objects.all().delete()
    settings.ALERT_EMAILS = ["oncall@team.example"]
    assert 'id="nobody-told"' not in client.get("/alerts/").content.decode()


def test_it_answers_a_bad_filter_with_a_400_naming_it(client, user) -> None:
    client.force_login(user)
    page = client.get("/alerts/?severity=catastrophic")
    assert page.status_code == 400 and b"severity" in page.content


def test_it_shows_an_alert_with_its_numbers_tables_and_actions(client, user, regression) -> None:
    client.force_login(user)
    text = client.get(f"/alerts/{regression.id}/").content.decode()
    assert regression.subject in text
    assert "Baseline mean" in text and f"{regression.baseline_median:.1f} tok/s" in text
    assert regression.baseline_median == pytest.approx(70, rel=0.03)
    assert "partly blind" not in text  # only after "accept as new baseline"
    assert "By time of day" in text and "18–24 UTC" in text
    for action in ("acknowledge", "accept", "invalid"):
        assert f"/alerts/{regression.id}/{action}/" in text
    assert "/endpoints/acme-m/?workload=w&amp;vantage=eu" in text
    assert "Opened" in text  # the history


def test_it_says_the_series_is_partly_blind_for_a_while_after_accepting(
    client, user, regression
) -> None:
    client.force_login(user)
    with time_machine.travel(T0 + timedelta(hours=28), tick=False):
        client.post(f"/alerts/{regression.id}/accept/", {"note": "new hardware"})
        text = client.get(f"/alerts/{regression.id}/").content.decode()
    regression.refresh_from_db()
    assert regression.status == Status.ACCEPTED
    assert "This series is partly blind until about" in text
    # Accepted at the first slow run (T0 + 25 h): 12 runs of history every 8 h, then the 72 h
    # window before the new level has a baseline of its own.
    until = T0 + timedelta(hours=25) + timedelta(hours=8 * 12) + timedelta(hours=72)
    assert until.strftime("%Y-%m-%d %H:%M") in text
    assert "has 0 of the 12 runs" in text and "large changes (25 % or more" in text


def test_it_acts_from_an_email_link_after_a_login_and_a_confirmation(
    client, user, regression
) -> None:
    link = f"/alerts/{regression.id}/acknowledge/"
    assert client.get(link)["Location"].startswith("/accounts/login/?next=")
    client.force_login(user)
    confirm = client.get(link)
    assert confirm.status_code == 200 and b"Acknowledge?" in confirm.content
    regression.refresh_from_db()
    assert regression.status == Status.OPEN  # opening the link changes nothing
    done = client.post(link, {"note": "looking into it"}, follow=True)
    regression.refresh_from_db()
    assert regression.status == Status.ACKNOWLEDGED
    event = regression.events.last()
    assert (event.kind, event.actor, event.note) == (
        EventKind.ACKNOWLEDGED,
        user,
        "looking into it",
    )
    assert event.dispatched_at is not None  # nobody is emailed about one's own action
    assert b"Acknowledge: done." in done.content
    client.post(f"/alerts/{regression.id}/accept/")
    regression.refresh_from_db()
    assert regression.status == Status.ACCEPTED and Segment.objects.filter(alert=regression)
    again = client.post(f"/alerts/{regression.id}/invalid/", follow=True)
    assert b"already accepted as new baseline" in again.content


def test_it_lets_a_viewer_read_an_alert_but_not_act_on_it(client, viewer, regression) -> None:
    client.force_login(viewer)
    page = client.get(f"/alerts/{regression.id}/").content.decode()
    assert regression.subject in page
    assert f"/alerts/{regression.id}/acknowledge/" not in page  # no button that would refuse
    for action in ("acknowledge", "accept", "invalid"):
        link = f"/alerts/{regression.id}/{action}/"
        for response in (client.get(link), client.post(link, {"note": "mine now"})):
            assert response.status_code == 403
            assert b"Only operators can" in response.content
    regression.refresh_from_db()
    assert regression.status == Status.OPEN and not regression.events.exclude(actor=None)


def test_it_never_offers_an_outage_as_the_new_baseline(client, user, series) -> None:
    store_history(
        **series, slots=daily_slots(end=T0, days=1), decode=lambda s: 70.0, ttft=lambda s: 600.0
    )
    for hour in (8, 16):  # two failed runs open an outage
        failing = store_run(
            **series, slot=T0 + timedelta(hours=hour), decode=[], ttft=[], errors=["overloaded"] * 5
        )
        evaluate_after_run(failing.id)
    outage = Alert.objects.get()
    client.force_login(user)
    assert (
        f"/alerts/{outage.id}/accept/" not in client.get(f"/alerts/{outage.id}/").content.decode()
    )
    page = client.get(f"/alerts/{outage.id}/accept/")
    assert b"only a speed regression can become the new baseline" in page.content


def test_it_lets_a_user_manage_their_own_subscriptions(client, user, series, django_user_model):
    client.force_login(user)
    new = client.post(
        reverse("alerts:subscription_new"),
        {
            "email": "Ana@Team.example",
            "endpoints": [series["endpoint"].id],
            "min_severity": "major",
            "delivery": "digest",
            "active": "on",
        },
    )
    assert new.status_code == 302
    subscription = Subscription.objects.get()
    assert (subscription.user, subscription.email) == (user, "ana@team.example")
    assert list(subscription.endpoints.all()) == [series["endpoint"]]
    page = client.get(reverse("alerts:subscriptions")).content.decode()
    assert "m-70b @ Acme" in page and "Major only" in page and "Daily digest" in page
    other = django_user_model.objects.create_user("bo", "bo@x.example", "pw")
    client.force_login(other)
    assert (
        client.get(reverse("alerts:subscription_edit", args=[subscription.id])).status_code == 404
    )
    assert (
        client.post(reverse("alerts:subscription_delete", args=[subscription.id])).status_code
        == 404
    )
    client.force_login(user)
    client.post(reverse("alerts:subscription_delete", args=[subscription.id]))
    assert not Subscription.objects.exists()


def test_it_gives_other_pages_the_open_alerts_of_their_endpoints(regression, series) -> None:
    quiet = Endpoint.objects.create(provider=series["endpoint"].provider, slug="q", model="q")
    badges = open_alerts_by_endpoint([series["endpoint"].id, quiet.id])
    assert badges == {series["endpoint"].id: [regression]}
    regression.status = Status.RESOLVED
    regression.save()
    assert open_alerts_by_endpoint([series["endpoint"].id]) == {}


def test_it_gives_a_whole_board_only_the_open_alerts_of_its_endpoints(regression, series) -> None:
    # A board of many endpoints (read without an id list) and one endpoint it does not show.
    provider = series["endpoint"].provider
    shown = [series["endpoint"]] + [
        Endpoint.objects.create(provider=provider, slug=f"e{index}", model=f"e{index}")
        for index in range(30)
    ]
    hidden = Endpoint.objects.create(provider=provider, slug="hidden", model="hidden")
    Alert.objects.create(
        **{
            field: getattr(regression, field)
            for field in ("kind", "metric", "workload", "vantage", "status", "severity")
        },
        endpoint=hidden,
        shift=regression.shift,
        baseline_median=regression.baseline_median,
        recent_median=regression.recent_median,
        first_bad_at=regression.first_bad_at,
    )
    badges = open_alerts_by_endpoint(endpoint.id for endpoint in shown)
    assert badges == {series["endpoint"].id: [regression]}
    assert list(open_alerts_by_endpoint([hidden.id])) == [hidden.id]


def test_it_shows_alerts_and_their_emails_in_the_admin(client, admin_user, regression) -> None:
    client.force_login(admin_user)
    for url in (
        "/admin/alerts/alert/",
        f"/admin/alerts/alert/{regression.id}/change/",
        "/admin/alerts/notification/",
        "/admin/alerts/subscription/add/",
        "/admin/alerts/changepoint/",
    ):
        assert client.get(url).status_code == 200, url
    assert regression.subject in client.get("/admin/alerts/alert/").content.decode()


def test_it_says_when_alerts_become_possible_before_any_baseline(client, user, series) -> None:
    client.force_login(user)
    # One day of runs (3 a day): the baseline needs 12 runs older than the 72 h window.
    store_history(
        **series, slots=daily_slots(end=T0, days=1), decode=lambda s: 70.0, ttft=lambda s: 600.0
    )
    with time_machine.travel(T0 + timedelta(hours=1), tick=False):
        html = client.get(reverse("alerts:list")).content.decode()
    first_slot = min(daily_slots(end=T0, days=1))
    assert "No baseline yet" in html and "Nothing is regressing" not in html
    # 3 days of the longest recent window + 12 runs at 3 a day = 7 days from the first run.
    expected = first_slot + timedelta(days=7)
    assert "Baselines need 7 days of runs" in html
    assert f"first alerts possible from {expected.day} {expected:%b %Y}" in html
    # ...and that a young history alerts only on changes twice the usual size.
    assert "until it spans 14 days, a change of every time of day alerts only at twice" in html
    assert "twice those while a series has under 14 days of history" in html

    # Two weeks later the series has its baseline: the page says nothing is regressing.
    store_history(
        **series, slots=daily_slots(end=T0 + timedelta(days=14), days=13),
        decode=lambda s: 70.0, ttft=lambda s: 600.0,
    )  # fmt: skip
    with time_machine.travel(T0 + timedelta(days=14, hours=1), tick=False):
        html = client.get(reverse("alerts:list")).content.decode()
    assert "No baseline yet" not in html and "Nothing is regressing right now" in html


def test_it_says_nothing_of_young_series_where_they_alert_as_any_other(client, user, settings):
    settings.ALERTS_YOUNG_EFFECT_FACTOR = 1.0
    client.force_login(user)
    html = client.get(reverse("alerts:list")).content.decode()
    assert "No baseline yet" in html and 'id="young-rule"' not in html
    assert "the usual size" not in html and "taken into account), outages" in html


def test_it_waits_for_a_baseline_spread_over_three_days_when_runs_are_hourly(
    client, user, series
) -> None:
    client.force_login(user)
    # Five days of hourly runs: 48 of them before the 72 h window, enough runs but in two days.
    every_hour = tuple(range(24))
    slots = daily_slots(end=T0, days=5, hours=every_hour)
    store_history(**series, slots=slots, decode=lambda s: 70.0, ttft=lambda s: 600.0)
    with time_machine.travel(T0 + timedelta(minutes=30), tick=False):
        html = client.get(reverse("alerts:list")).content.decode()
    # 3 days of the longest recent window + 3 days of baseline (12 runs take half a day).
    expected = min(slots) + timedelta(days=6)
    assert "No baseline yet" in html and "Baselines need 6 days of runs" in html
    assert f"first alerts possible from {expected.day} {expected:%b %Y}" in html


def test_it_waits_for_six_runs_of_long_window_and_twelve_of_baseline_on_a_daily_schedule(
    client, user, series
) -> None:
    client.force_login(user)
    slots = daily_slots(end=T0, days=2, hours=(18,))  # one run a day
    store_history(**series, slots=slots, decode=lambda s: 70.0, ttft=lambda s: 600.0)
    with time_machine.travel(T0 + timedelta(minutes=30), tick=False):
        html = client.get(reverse("alerts:list")).content.decode()
    # The long window holds six runs (six days) and the baseline twelve before it.
    expected = min(slots) + timedelta(days=18)
    assert "Baselines need 18 days of runs" in html
    assert f"first alerts possible from {expected.day} {expected:%b %Y}" in html


def test_it_marks_endpoints_not_measured_in_the_subscription_picker(client, user, series):
    off = Provider.objects.create(
        slug="groq", name="Groq", protocol="openai_chat", base_url="https://groq.example/v1",
        api_key_env="TOKSPEED_TEST_UNSET_GROQ_KEY", enabled=False,
    )  # fmt: skip
    Endpoint.objects.create(provider=off, slug="g-llama", model="llama")
    client.force_login(user)
    page = client.get(reverse("alerts:subscription_new")).content.decode()
    assert "llama @ Groq — not measured: TOKSPEED_TEST_UNSET_GROQ_KEY is not set" in page
    assert "m-70b @ Acme\n" in page or "m-70b @ Acme<" in page  # measured: no mark
    assert "Groq — not measured: TOKSPEED_TEST_UNSET_GROQ_KEY is not set" in page
