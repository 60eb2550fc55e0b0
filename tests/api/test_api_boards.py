"""REST API: leaderboard, endpoint history and agent-loop projections (the page's selectors)."""

from statistics import median

import pytest

from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run, workload

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]

FAST = {"ttft": [210.0, 190.0, 250.0], "tps": [700.0, 760.0, 720.0]}
SLOW = {"ttft": [900.0, 640.0, 700.0], "tps": [60.0, 75.0, 70.0]}


@pytest.fixture
def board():
    """Two endpoints with three recent base runs each, and one run outside every window."""
    fast = make_endpoint(make_provider("wafer"), "wafer-fast")
    slow = make_endpoint(make_provider("gpu", simulated=True), "gpu-slow")
    for ep, figures in ((fast, FAST), (slow, SLOW)):
        for hours, ttft, tps in zip((3, 11, 19), figures["ttft"], figures["tps"], strict=True):
            make_run(ep, hours_ago(hours), ttft_ms=ttft, decode_tps=tps)
        make_run(ep, hours_ago(24 * 40), ttft_ms=99_999.0, decode_tps=1.0)
    return fast, slow


def test_it_ranks_endpoints_by_decode_speed_with_the_pages_figures(reader, board):
    response = reader.get("/api/v1/leaderboard/")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["filters"]["window"] == "72h" and body["filters"]["sort"] == "decode"
    rows = {row["slug"]: row for row in body["rows"]}
    assert [row["slug"] for row in body["rows"]] == ["wafer-fast", "gpu-slow"]
    for slug, figures in (("wafer-fast", FAST), ("gpu-slow", SLOW)):
        assert rows[slug]["ttft_p50_ms"] == pytest.approx(median(figures["ttft"]))
        assert rows[slug]["decode_tps_p50"] == pytest.approx(median(figures["tps"]))
        assert rows[slug]["runs"] == len(figures["ttft"])
    assert rows["gpu-slow"]["simulated"] is True


def test_it_sorts_the_leaderboard_by_ttft(reader, board):
    rows = reader.get("/api/v1/leaderboard/", {"sort": "-ttft"}).json()["rows"]
    assert [row["slug"] for row in rows] == ["gpu-slow", "wafer-fast"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"window": "3w"}, "window"),
        ({"sort": "fastest"}, "sort"),
        ({"tod": "7"}, "tod"),
        ({"concurrency": "-1"}, "concurrency"),
        ({"workload": "nope"}, "workload"),
        ({"vantage": "nope"}, "vantage"),
        ({"windw": "24h"}, "windw"),
        ({"window": "24h\x00"}, "window"),
    ],
)
def test_it_names_the_bad_leaderboard_parameter(reader, params, field):
    response = reader.get("/api/v1/leaderboard/", params)
    assert response.status_code == 400
    assert field in response.json()


def test_it_projects_the_agent_loop_from_the_medians(reader, board):
    params = {"calls": 10, "tokens_per_call": 500, "tool_s": 0.5}
    response = reader.get("/api/v1/agent-loop/", params)
    assert response.status_code == 200, response.json()
    body = response.json()
    by_slug = {p["slug"]: p for p in body["projections"]}
    for slug, figures in (("wafer-fast", FAST), ("gpu-slow", SLOW)):
        ttft_s, tps = median(figures["ttft"]) / 1000, median(figures["tps"])
        expected = 10 * (ttft_s + 500 / tps) + 10 * 0.5
        assert by_slug[slug]["wall_s"] == pytest.approx(expected)
    assert [p["slug"] for p in body["projections"]] == ["wafer-fast", "gpu-slow"]
    assert body["thresholds_s"] == {"immediate": 1.0, "attention": 10.0}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"calls": "0"}, "calls"),
        ({"calls": "many"}, "calls"),
        ({"tokens_per_call": "1e9"}, "tokens_per_call"),
        ({"tool_s": "-1"}, "tool_s"),
        ({"tool_s": "nan"}, "tool_s"),
        ({"window": "1y"}, "window"),
    ],
)
def test_it_names_the_bad_agent_loop_parameter(reader, params, field):
    response = reader.get("/api/v1/agent-loop/", params)
    assert response.status_code == 400
    assert field in response.json()


def test_it_shows_an_endpoints_history(reader, board):
    fast, _ = board
    make_run(fast, hours_ago(5), wl=workload("long-context"), ttft_ms=4000.0)
    response = reader.get("/api/v1/endpoints/wafer-fast/history/", {"window": "7d"})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["endpoint"]["slug"] == "wafer-fast" and body["window_hours"] == 168
    assert body["workload"] == "base"
    assert sorted(point["ttft_ms"] for point in body["runs"]) == sorted(FAST["ttft"])
    long = reader.get("/api/v1/endpoints/wafer-fast/history/", {"workload": "long-context"})
    assert [point["ttft_ms"] for point in long.json()["runs"]] == [4000.0]


@pytest.mark.parametrize(
    ("params", "field"),
    [({"workload": "nope"}, "workload"), ({"window": "2h"}, "window"), ({"sort": "ttft"}, "sort")],
)
def test_it_names_the_bad_history_parameter(reader, board, params, field):
    response = reader.get("/api/v1/endpoints/wafer-fast/history/", params)
    assert response.status_code == 400
    assert field in response.json()


def test_it_answers_404_for_the_history_of_an_unknown_endpoint(reader):
    assert reader.get("/api/v1/endpoints/nope/history/").status_code == 404
