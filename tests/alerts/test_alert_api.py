"""The alerts API: list with filters, retrieve, events, and acting (POST)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Group
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.models import Alert, Segment, Status
from alerts.testing import daily_slots, store_history
from benchmarks.models import Vantage, Workload
from providers.models import Endpoint, Provider

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 10, 18, 0, tzinfo=UTC)


@pytest.fixture
def regression() -> Alert:
    provider = Provider.objects.create(
        slug="acme", name="Acme", protocol="openai_chat", base_url="https://acme.example/v1"
    )
    series = {
        "endpoint": Endpoint.objects.create(provider=provider, slug="acme-m", model="m-70b"),
        "workload": Workload.objects.create(slug="w", name="Standard prompt"),
        "vantage": Vantage.objects.create(slug="eu", label="EU probe", queue="eu"),
    }
    store_history(
        **series, slots=daily_slots(end=T0, days=8), decode=lambda s: 70.0, ttft=lambda s: 600.0
    )
    runs = store_history(
        **series,
        slots=[T0 + timedelta(hours=h) for h in (25, 26, 27)],
        decode=lambda s: 70.0,
        ttft=lambda s: 900.0,
        seed=1,
    )
    for run in runs:
        evaluate_after_run(run.id)
    return Alert.objects.get()


@pytest.fixture
def api(django_user_model) -> APIClient:
    """An operator (the "operators" group) calling with a token."""
    user = django_user_model.objects.create_user("ana", "ana@team.example", "pw")
    user.groups.add(Group.objects.get(name="operators"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_it_lists_alerts_for_users_or_anyone_when_public(api, regression) -> None:
    assert APIClient().get("/api/v1/alerts/").status_code in (401, 403)
    body = api.get("/api/v1/alerts/").json()
    assert body["count"] == 1
    item = body["results"][0]
    assert (item["id"], item["metric"], item["endpoint"], item["status"]) == (
        regression.id,
        "ttft_ms",
        "acme-m",
        "open",
    )
    assert item["shift"] == pytest.approx(0.5, abs=0.05)  # 600 ms -> 900 ms
    assert item["actions"] == ["acknowledge", "accept", "invalid"]
    assert item["links"]["Acknowledge"].endswith(f"/alerts/{regression.id}/acknowledge/")
    with override_settings(TOKSPEED_PUBLIC_DASHBOARD=True):
        assert APIClient().get("/api/v1/alerts/").json()["count"] == 1


def test_it_filters_and_refuses_unknown_parameters(api, regression) -> None:
    assert api.get("/api/v1/alerts/?metric=decode_tps").json()["count"] == 0
    assert api.get("/api/v1/alerts/?provider=acme&severity=major").json()["count"] == 1
    assert api.get("/api/v1/alerts/?view=history").json()["count"] == 0
    bad = api.get("/api/v1/alerts/?severity=huge")
    assert bad.status_code == 400 and "severity" in bad.json()
    assert api.get("/api/v1/alerts/?sevrity=major").status_code == 400


def test_it_returns_an_alert_with_details_and_its_events(api, regression) -> None:
    detail = api.get(f"/api/v1/alerts/{regression.id}/").json()
    assert detail["details"]["n_recent"] == 3 and detail["details"]["buckets"]
    events = api.get(f"/api/v1/alerts/{regression.id}/events/").json()
    assert [e["kind"] for e in events["results"]] == ["opened"]
    assert api.get("/api/v1/alerts/999999/").status_code == 404


def test_it_acts_on_an_alert_for_authenticated_users(api, regression) -> None:
    url = f"/api/v1/alerts/{regression.id}"
    assert APIClient().post(f"{url}/acknowledge/").status_code in (401, 403)
    with override_settings(TOKSPEED_PUBLIC_DASHBOARD=True):  # public reads, still no writes
        assert APIClient().post(f"{url}/acknowledge/").status_code in (401, 403)
    done = api.post(f"{url}/acknowledge/", {"note": "on it"}, format="json")
    assert done.status_code == 200 and done.json()["status"] == "acknowledged"
    accepted = api.post(f"{url}/accept/", format="json").json()
    assert accepted["status"] == "accepted" and Segment.objects.filter(alert=regression).exists()
    refused = api.post(f"{url}/invalid/", format="json")
    assert refused.status_code == 409 and "already" in refused.json()["detail"]
    kinds = [e["kind"] for e in api.get(f"{url}/events/").json()["results"]]
    assert kinds == ["opened", "acknowledged", "accepted"]
    assert Alert.objects.get().status == Status.ACCEPTED


def test_it_lets_a_viewer_read_alerts_but_not_act_on_them(django_user_model, regression) -> None:
    viewer = django_user_model.objects.create_user("vic", "vic@team.example", "pw")
    client = APIClient()
    client.force_authenticate(viewer)
    item = client.get(f"/api/v1/alerts/{regression.id}/").json()
    assert item["actions"] == []  # nothing offered that would be refused
    for action in ("acknowledge", "accept", "invalid"):
        response = client.post(f"/api/v1/alerts/{regression.id}/{action}/", {}, format="json")
        assert response.status_code == 403
        assert "operators" in response.json()["detail"]
    regression.refresh_from_db()
    assert regression.status == Status.OPEN and not Segment.objects.exists()


def test_a_mistyped_endpoint_provider_or_vantage_is_refused_not_an_empty_list(
    api, regression
) -> None:
    """A typo in a slug answered 200 with no alerts, which reads as "nothing is wrong"; the
    alerts page already refused it."""
    for name, slug in (("endpoint", "acme-mm"), ("provider", "acmee"), ("vantage", "euu")):
        bad = api.get(f"/api/v1/alerts/?{name}={slug}")
        assert bad.status_code == 400, (name, bad.content)
        assert slug in bad.json()[name][0]
    assert api.get("/api/v1/alerts/?endpoint=acme-m&vantage=eu").json()["count"] == 1
