"""A run whose client was saturated is kept in the medians and marked wherever they are shown:
the board row (exact and from rollups), the API row, the endpoint page and /metrics; a run
without saturated samples marks nothing (docs/design.md §4, "Client saturation")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from prometheus_client.parser import text_string_to_metric_families

from benchmarks.finish import finish_run
from benchmarks.models import Run, RunStatus, WindowRollup
from benchmarks.rollups import windows
from tests import dashboard_data as data
from tests.api_factories import make_endpoint, make_provider, make_run, make_sample, token_client

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 15, 1, 0, tzinfo=UTC)
MARK = "client saturated in"


def finished(slug: str, saturated: int, *, days_ago: int = 2) -> Run:
    """A run of 4 requests finished the way a worker finishes one (its samples summarised,
    counted into the rollups), `saturated` of them read by a client that fell behind."""
    endpoint = make_endpoint(make_provider(slug), slug)
    run = make_run(
        endpoint,
        NOW - timedelta(days=days_ago),
        status=RunStatus.RUNNING,
        wl=data.workload(),  # made if a transactional test flushed migration 0002's rows
        van=data.vantage(),
    )
    for index in range(4):
        flags = {"saturated": True, "itl_p99_ms": None, "itl_max_ms": None}
        make_sample(run, index, **(flags if index < saturated else {}))
    assert finish_run(run)
    return run


@pytest.fixture
def runs(django_user_model, client):
    with time_machine.travel(NOW, tick=False):
        sat, clean = finished("sat", saturated=3), finished("clean", saturated=0)
        windows.refresh()  # the daily refresh: the 30-day board then reads window rows
        client.force_login(django_user_model.objects.create_user("viewer"))
        yield sat, clean


def row_of(page: str, slug: str) -> str:
    start = page.index(f'<tr data-slug="{slug}"')
    return page[start : page.index("</tr>", start)]


@pytest.mark.parametrize("window", ["72h", "30d"])
def test_it_marks_the_board_row_of_a_saturated_run_only(runs, client, window):
    page = client.get("/", {"window": window}).content.decode()

    assert f"{MARK} 1 of 1 run" in row_of(page, "sat")
    assert MARK not in row_of(page, "clean")


def test_it_counts_saturated_runs_in_the_window_rollups(runs):
    assert set(WindowRollup.objects.values_list("endpoint__slug", "saturated_runs")) == {
        ("sat", 1),
        ("clean", 0),
    }


@pytest.mark.parametrize("window", ["72h", "30d"])
def test_it_gives_the_count_and_share_in_the_board_api(runs, django_user_model, window):
    api = token_client(django_user_model.objects.create_user("script"))
    with time_machine.travel(NOW, tick=False):
        rows = api.get("/api/v1/leaderboard/", {"window": window}).json()["rows"]
    by_slug = {row["slug"]: row for row in rows}

    assert (by_slug["sat"]["saturated_runs"], by_slug["sat"]["saturated_share"]) == (1, 1.0)
    assert (by_slug["clean"]["saturated_runs"], by_slug["clean"]["saturated_share"]) == (0, 0.0)


@pytest.mark.parametrize("window", ["72h", "365d"])  # one point per run; one per UTC day
def test_it_marks_the_endpoint_page_of_a_saturated_run_only(runs, client, window):
    with time_machine.travel(NOW, tick=False):
        sat = client.get("/endpoints/sat/", {"window": window}).content.decode()
        clean = client.get("/endpoints/clean/", {"window": window}).content.decode()

    decode = sat[sat.index("Decode p50 (per user)") :]
    assert f"{MARK} 1 of 1 run" in decode[: decode.index('<div class="stat">')]
    assert "client saturated" in sat[sat.index('id="recent-runs"') :]
    assert "client saturated" not in clean


def test_it_exposes_the_saturated_runs_in_metrics(runs, admin_client):
    with time_machine.travel(NOW, tick=False):
        text = admin_client.get("/metrics").content.decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}

    per_series = {
        s.labels["endpoint"]: s.value for s in families["tokspeed_saturated_runs_72h"].samples
    }
    share = families["tokspeed_saturated_share_72h"].samples
    assert per_series == {"sat": 1.0, "clean": 0.0}
    assert [(s.labels, s.value) for s in share] == [({}, 0.5)]
