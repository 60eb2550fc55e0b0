"""A DELETE through the API archives: boards hide it, its history and exports keep every run;
restore brings it back; only a superuser's confirmed purge erases the history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from benchmarks.models import Run, Sample
from tests.api.test_api_export import read_csv
from tests.api_factories import make_endpoint, make_provider, make_run, make_sample

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("fresh_throttles", "allow_private", "pinned_clock"),
]
NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


@pytest.fixture
def pinned_clock():
    """The boards' windows end at NOW, whatever the hour the suite runs at."""
    with time_machine.travel(NOW, tick=True):
        yield


@pytest.fixture
def measured():
    """acme-fast with three finished runs of two samples each, in the last few hours."""
    endpoint = make_endpoint(make_provider("acme"))
    for hours in (1, 2, 3):
        run = make_run(endpoint, NOW - timedelta(hours=hours), ok=2)
        make_sample(run, 0)
        make_sample(run, 1)
    return endpoint


@pytest.fixture
def superuser() -> APIClient:
    client = APIClient()
    client.force_authenticate(User.objects.create_user("root", is_staff=True, is_superuser=True))
    return client


def board_slugs(client: APIClient) -> list[str]:
    return [row["slug"] for row in client.get("/api/v1/leaderboard/").json()["rows"]]


def test_it_archives_an_endpoint_on_delete_and_keeps_its_runs(staff, reader, measured):
    assert board_slugs(reader) == ["acme-fast"]

    response = staff.delete("/api/v1/endpoints/acme-fast/")

    assert response.status_code == 200, response.content
    assert response.json()["archived_at"], "the answer says it was archived, not deleted"
    assert Run.objects.filter(endpoint=measured).count() == 3, "runs kept"
    assert Sample.objects.filter(run__endpoint=measured).count() == 6, "samples kept"
    assert board_slugs(reader) == [], "hidden from the leaderboard"
    listed = reader.get("/api/v1/endpoints/").json()["results"]
    assert listed == [], "hidden from the endpoint list"
    archived = reader.get("/api/v1/endpoints/", {"archived": "true"}).json()["results"]
    assert [e["slug"] for e in archived] == ["acme-fast"]
    history = reader.get("/api/v1/endpoints/acme-fast/history/")
    assert history.status_code == 200 and history.json()["recent_runs"], "history kept"
    rows = read_csv(reader.get("/api/v1/export/runs.csv", {"endpoint": "acme-fast"}))
    assert len(rows) == 3, "the export still has every run"


def test_it_shows_an_archived_endpoints_history_page(staff, client, measured, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    staff.delete("/api/v1/endpoints/acme-fast/")

    page = client.get("/endpoints/acme-fast/")

    assert page.status_code == 200
    assert page.context["has_runs"], "the history page still has the runs"


def test_it_archives_a_provider_and_hides_its_endpoints(staff, reader, measured):
    assert staff.delete("/api/v1/providers/acme/").status_code == 200
    assert board_slugs(reader) == []
    assert reader.get("/api/v1/endpoints/").json()["results"] == []
    assert Run.objects.filter(endpoint=measured).count() == 3

    restored = staff.post("/api/v1/providers/acme/restore/")

    assert restored.status_code == 200
    assert board_slugs(reader) == ["acme-fast"], "restored with its history"


def test_it_restores_an_archived_endpoint_to_the_boards_and_schedules(staff, reader, measured):
    staff.delete("/api/v1/endpoints/acme-fast/")
    measured.refresh_from_db()
    assert measured.enabled is False, "schedules skip an archived endpoint"

    assert staff.post("/api/v1/endpoints/acme-fast/restore/").status_code == 200

    measured.refresh_from_db()
    assert measured.enabled is True and measured.archived_at is None
    assert board_slugs(reader) == ["acme-fast"]


def test_it_purges_only_for_a_superuser_who_confirms_an_archived_endpoint(
    staff, superuser, measured
):
    url = "/api/v1/endpoints/acme-fast/purge/"
    not_yet = superuser.post(url, {"confirm": "acme-fast"}, format="json")
    assert not_yet.status_code == 400, "a live endpoint cannot be purged"
    assert "DELETE it first" in not_yet.json()["confirm"][0]
    staff.delete("/api/v1/endpoints/acme-fast/")
    assert staff.post(url, {"confirm": "acme-fast"}, format="json").status_code == 403
    unconfirmed = superuser.post(url, {}, format="json")
    assert unconfirmed.status_code == 400 and "confirm" in unconfirmed.json()
    assert superuser.post(url, {"confirm": "acme-slow"}, format="json").status_code == 400
    assert Run.objects.filter(endpoint=measured).count() == 3, "nothing purged so far"

    purged = superuser.post(url, {"confirm": "acme-fast"}, format="json")

    assert purged.status_code == 200, purged.content
    assert purged.json()["purged"]["Run"] == 3
    assert not Run.objects.filter(endpoint_id=measured.id).exists()
    assert not Sample.objects.filter(run__endpoint_id=measured.id).exists()
