"""Conditional GETs and the shared response cache of the read API and the dashboard pages."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run, vantage, workload

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]


@pytest.fixture
def endpoint():
    found = make_endpoint(make_provider("wafer"), "wafer-fast")
    make_run(found, hours_ago(3), ttft_ms=200.0, decode_tps=700.0)
    return found


@pytest.mark.parametrize("path", ["/api/v1/leaderboard/", "/", "/endpoints/wafer-fast/"])
def test_it_answers_304_to_a_client_holding_the_current_response(public, anon, endpoint, path):
    first = anon.get(path)
    assert first.status_code == 200
    assert first["ETag"] and first["Last-Modified"]
    assert anon.get(path, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    since = anon.get(path, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    assert since.status_code == 304 and not since.content
    make_run(endpoint, hours_ago(1), ttft_ms=300.0, decode_tps=500.0)
    changed = anon.get(path, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]


def test_it_serves_repeated_views_from_the_cache_until_a_run_finishes(public, anon, endpoint):
    first = anon.get("/api/v1/leaderboard/").json()
    with CaptureQueriesContext(connection) as queries:
        again = anon.get("/api/v1/leaderboard/")
    assert again.json() == first
    assert len(queries) <= 5  # the validator and the cache, not the board's queries
    make_run(endpoint, hours_ago(1), ttft_ms=300.0, decode_tps=500.0)
    rows = anon.get("/api/v1/leaderboard/").json()["rows"]
    assert rows[0]["runs"] == first["rows"][0]["runs"] + 1


def test_it_retires_cached_pages_when_an_endpoint_is_edited(public, client, endpoint):
    assert "wafer-fast" in client.get("/price/").content.decode()
    endpoint.model = "renamed-model"
    endpoint.save()
    assert "renamed-model" in client.get("/price/").content.decode()


def test_it_never_serves_one_callers_cached_answer_to_another(private, anon, endpoint):
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    user = User.objects.create_user("ada")
    token = Token.objects.create(user=user)
    authorised = anon.get("/api/v1/leaderboard/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert authorised.status_code == 200
    assert anon.get("/api/v1/leaderboard/").status_code in (401, 403)


def test_it_answers_a_conditional_get_in_two_queries(public, anon, endpoint):
    # The validator every read computes: the run and alert state in one query, the catalogue
    # version from the cache in the other.
    first = anon.get("/endpoints/wafer-fast/")
    with CaptureQueriesContext(connection) as queries:
        again = anon.get("/endpoints/wafer-fast/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    assert len(queries) == 2


def test_a_change_point_deleted_by_the_daily_pass_retires_the_cached_page(public, anon, endpoint):
    """The pass replaces a series' change points: one it no longer finds leaves the chart, and
    the page stops being answered from what was cached with it (a newer point stays, so the
    newest stamp does not move)."""
    from alerts.models import ChangePoint

    def point(hours: float, metric: str) -> ChangePoint:
        return ChangePoint.objects.create(
            endpoint=endpoint, workload=workload(), vantage=vantage(), metric=metric,
            at=hours_ago(hours), before_median=700.0, after_median=500.0, change=500 / 700 - 1,
        )  # fmt: skip

    gone = point(5, "decode_tps")
    point(2, "ttft_ms")  # written after it: the newest
    first = anon.get("/endpoints/wafer-fast/")
    assert anon.get("/endpoints/wafer-fast/", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    ChangePoint.objects.filter(id=gone.id).delete()
    again = anon.get("/endpoints/wafer-fast/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 200 and again["ETag"] != first["ETag"]
