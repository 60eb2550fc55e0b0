"""The API's edges a new user meets first: the index names every resource, an unknown path
answers JSON, one pair of time filters works on the pages, the API and the CSV alike, and money
is written without float noise."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User

from tests import dashboard_data as data

pytestmark = pytest.mark.django_db


@pytest.fixture
def user_client(client):
    data.default_workloads()
    data.vantage()
    client.force_login(User.objects.create_user("ana"))
    return client


@pytest.fixture
def two_days():
    """Runs at six recent slots (three a day, two UTC days); the newest slot's day, its runs."""
    # 3 × 0.1 + 0.3 is 0.6000000000000001 in floats: the blended price shows any float noise.
    endpoint = data.endpoint(data.provider("acme"), "acme-fast", price_in=0.1, price_out=0.3)
    runs = [data.run(endpoint, slot) for slot in data.recent_slots(6)]
    day = runs[-1].slot.date()
    return day, {run.id for run in runs if run.slot.date() == day}


def csv_rows(response) -> list[dict[str, str]]:
    text = b"".join(response.streaming_content).decode()
    return [row for row in csv.DictReader(io.StringIO(text)) if not row["id"].startswith("#")]


def test_it_lists_advice_and_exports_at_the_api_root(user_client):
    root = user_client.get("/api/v1/", HTTP_ACCEPT="application/json").json()
    assert {"advice", "exports"} <= set(root), f"missing from the index: {sorted(root)}"
    assert root["advice"]["url"].endswith("/api/v1/advice/")
    assert root["exports"]["url"].endswith("/api/v1/exports/")


@pytest.mark.parametrize("path", ["/api/v1/nope/", "/api/v1/runs/1/nope/", "/api/v2/"])
def test_it_answers_an_unknown_api_path_with_json(user_client, path):
    response = user_client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    assert "/api/v1/" in response.json()["detail"]


def test_it_still_adds_the_missing_slash_to_a_known_api_path(user_client):
    response = user_client.get("/api/v1/leaderboard", {"window": "24h"})
    assert response.status_code == 301
    assert response["Location"] == "/api/v1/leaderboard/?window=24h"


def test_it_takes_from_and_to_in_the_csv_export_like_the_runs_page(user_client, two_days):
    day, expected = two_days
    days = {"from": day.isoformat(), "to": day.isoformat()}
    response = user_client.get("/api/v1/export/runs.csv", days)
    assert response.status_code == 200, response.content[:300]
    assert {int(row["id"]) for row in csv_rows(response)} == expected
    api = user_client.get("/api/v1/runs/", days).json()
    assert {run["id"] for run in api["results"]} == expected


def test_it_takes_since_and_until_on_the_runs_page_like_the_csv(user_client, two_days):
    day, expected = two_days
    times = {
        "since": f"{day.isoformat()}T00:00:00Z",
        "until": f"{day + timedelta(days=1)}T00:00:00Z",
    }
    page = user_client.get("/runs/", times)
    assert page.status_code == 200, page.content[:300]
    shown = {int(run_id) for run_id in re.findall(r'<tr data-run="(\d+)"', page.content.decode())}
    assert shown == expected, "the runs page ignored since/until"
    link = re.search(r'href="(/api/v1/export/runs.csv\?[^"]+)"', page.content.decode()).group(1)
    rows = csv_rows(user_client.get(link.replace("&amp;", "&")))
    assert {int(row["id"]) for row in rows} == expected, "the page's CSV link lost the range"


def test_it_writes_prices_and_costs_without_float_noise(user_client, two_days):
    noise = re.compile(r"\d\.\d{13,}")
    exponent = re.compile(r"\d[eE]-\d")
    board = user_client.get("/api/v1/leaderboard/").content.decode()
    row = next(r for r in user_client.get("/api/v1/leaderboard/").json()["rows"])
    assert row["blended_price_per_mtok"] is not None and row["cost_per_request_usd"] is not None
    assert not noise.findall(board), f"float noise in the JSON: {noise.findall(board)}"
    response = user_client.get("/api/v1/export/leaderboard.csv")
    text = b"".join(response.streaming_content).decode()
    assert not noise.findall(text), f"float noise in the CSV: {noise.findall(text)}"
    assert not exponent.findall(text), f"exponent notation in the CSV: {exponent.findall(text)}"
    loop = user_client.get("/api/v1/agent-loop/", {"calls": 7}).content.decode()
    assert not noise.findall(loop), f"float noise in the agent loop: {noise.findall(loop)}"
