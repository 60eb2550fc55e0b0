"""The runs list page (/runs/): newest first, keyset pages, filters on indexes, 400s."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from benchmarks.models import Run, RunStatus
from dashboard.api.keyset import OLDER, encode_cursor
from dashboard.run_filters import RunListForm, matching_runs
from dashboard.views import runs as runs_view
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


@pytest.fixture
def viewer(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("viewer"))
    return client


@pytest.fixture
def fleet():
    """Two providers, three endpoints, two workloads and vantages, a failed run with a reason."""
    acme, zeta = data.provider("acme"), data.provider("zeta")
    fast, slow = data.endpoint(acme, "acme-fast"), data.endpoint(acme, "acme-slow")
    other = data.endpoint(zeta, "zeta-big")
    base, long = data.workload("base"), data.workload("long-context")
    home, away = data.vantage("local"), data.vantage("eu-west")
    made = {
        "fast-1": data.run(fast, NOW - timedelta(hours=1), ttft_ms=210.0, decode_tps=95.5),
        "slow-2": data.run(slow, NOW - timedelta(hours=2), wl=long, errors=2),
        "other-3": data.run(other, NOW - timedelta(hours=3), van=away),
        "fast-26": data.run(fast, NOW - timedelta(hours=26)),
        "other-50": data.run(other, NOW - timedelta(hours=50), ok=0, errors=5),
    }
    made["other-50"].failure_reason = "auth_error: key rejected (HTTP 401)"
    made["other-50"].save(update_fields=["failure_reason"])
    return {**made, "base": base, "home": home}


def listed(response) -> list[int]:
    assert response.status_code == 200, response.content[:500]
    return [int(i) for i in re.findall(r'data-run="(\d+)"', response.content.decode())]


def test_it_lists_every_run_newest_first_with_its_figures(viewer, fleet):
    response = viewer.get("/runs/")
    expected = list(Run.objects.order_by("-slot", "-id").values_list("id", flat=True))
    assert listed(response) == expected
    html = response.content.decode()
    row = html[html.index(f'data-run="{fleet["fast-1"].id}"') :].split("</tr>")[0]
    assert "210 ms" in row and "95.5 tok/s" in row and "5 / 0" in row
    assert f'href="/runs/{fleet["fast-1"].id}/"' in row and "/endpoints/acme-fast/" in row
    failed = html[html.index(f'data-run="{fleet["other-50"].id}"') :].split("</tr>")[0]
    assert "failed" in failed and "key rejected (HTTP 401)" in failed and "0 / " in failed


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ({"endpoint": "acme-fast"}, ["fast-1", "fast-26"]),
        ({"provider": "zeta"}, ["other-3", "other-50"]),
        ({"workload": "long-context"}, ["slow-2"]),
        ({"vantage": "eu-west"}, ["other-3"]),
        ({"status": "failed"}, ["other-50"]),
        ({"status": "partial"}, ["slow-2"]),
        ({"from": "2026-03-09", "to": "2026-03-09"}, ["fast-26"]),
        ({"from": "2026-03-10"}, ["fast-1", "slow-2", "other-3"]),
        ({"to": "2026-03-09", "provider": "zeta"}, ["other-50"]),
    ],
)
def test_it_filters_the_runs(viewer, fleet, query, names):
    assert listed(viewer.get("/runs/", query)) == [fleet[name].id for name in names]


def test_it_pages_by_keyset_and_links_stay_put_while_new_runs_arrive(viewer, fleet, monkeypatch):
    monkeypatch.setattr(runs_view, "PAGE_SIZE", 2)
    ids = [fleet[n].id for n in ("fast-1", "slow-2", "other-3", "fast-26", "other-50")]
    first = viewer.get("/runs/")
    assert listed(first) == ids[:2] and 'rel="prev"' not in first.content.decode()
    older = re.search(r'href="(\?[^"]+)" rel="next"', first.content.decode()).group(1)
    second = viewer.get("/runs/" + older.replace("&amp;", "&"))
    assert listed(second) == ids[2:4]

    # Two runs arrive at the top: the older link still shows the same runs, and "newer" from
    # the second page shows the runs just above it, not the new ones.
    data.run(fleet["fast-1"].endpoint, NOW, wl=fleet["base"])
    data.run(fleet["fast-1"].endpoint, NOW + timedelta(minutes=1), wl=fleet["base"])
    again = viewer.get("/runs/" + older.replace("&amp;", "&"))
    assert listed(again) == ids[2:4]
    newer = re.search(r'href="(\?[^"]+)" rel="prev"', again.content.decode()).group(1)
    assert listed(viewer.get("/runs/" + newer.replace("&amp;", "&"))) == ids[:2]
    last = re.search(r'href="(\?[^"]+)" rel="next"', again.content.decode()).group(1)
    final = viewer.get("/runs/" + last.replace("&amp;", "&"))
    assert listed(final) == ids[4:] and 'rel="next"' not in final.content.decode()


def test_it_keeps_the_filters_in_the_page_links(viewer, fleet, monkeypatch):
    monkeypatch.setattr(runs_view, "PAGE_SIZE", 1)
    page = viewer.get("/runs/", {"provider": "zeta"}).content.decode()
    older = re.search(r'href="(\?[^"]+)" rel="next"', page).group(1).replace("&amp;", "&")
    assert "provider=zeta" in older
    assert listed(viewer.get("/runs/" + older)) == [fleet["other-50"].id]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("endpoint=no-such", "endpoint"),
        ("status=exploded", "status"),
        ("from=yesterday", "from"),
        ("from=2026-03-10&to=2026-03-01", "to"),
        ("to=9999-12-31", "to"),
        ("cursor=not-a-cursor", "cursor"),
        ("cursor=%FF%FE", "cursor"),
        ("page=2", "page"),
        ("endpoint=acme-fast&endpoint=zeta-big", "endpoint"),
        ("endpoint=acme%00", "endpoint"),
        ("cursor=%00", "cursor"),
        ("vantage=%00&workload=base", "vantage"),
    ],
)
def test_it_answers_a_bad_parameter_with_a_400_page_naming_it(viewer, fleet, query, field):
    response = viewer.get(f"/runs/?{query}")
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()


def test_it_answers_a_cursor_past_the_oldest_run_with_a_way_back(viewer, fleet):
    oldest = fleet["other-50"]
    cursor = encode_cursor(OLDER, oldest.slot, oldest.id)
    response = viewer.get("/runs/", {"cursor": cursor})
    assert listed(response) == []
    html = response.content.decode()
    assert "No runs this way" in html and 'rel="first"' in html


def test_it_sends_a_signed_out_visitor_to_log_in_when_the_dashboard_is_private(client, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = False
    response = client.get("/runs/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_it_links_all_runs_from_the_endpoint_page_and_the_nav(viewer, fleet):
    html = viewer.get("/endpoints/acme-fast/").content.decode()
    assert 'href="/runs/?endpoint=acme-fast" id="all-runs"' in html
    runs_html = viewer.get("/runs/").content.decode()
    assert re.search(r'<a href="/runs/" aria-current="page">Runs</a>', runs_html)


def test_it_links_the_streamed_csv_of_the_same_filters(viewer, fleet):
    html = viewer.get("/runs/", {"provider": "zeta", "from": "2026-03-08"}).content.decode()
    link = re.search(r'href="(/api/v1/export/runs\.csv\?[^"]+)"', html).group(1)
    response = viewer.get(link.replace("&amp;", "&"))
    body = b"".join(response.streaming_content).decode()
    assert response.status_code == 200 and "# end of export: 2 rows" in body


def plan(query: dict[str, str]) -> str:
    """EXPLAIN of the page's query (first page) with sequential scans and sorts priced out, so
    the plan shows whether an index can give both the filter and the order."""
    form = RunListForm({name: query.get(name, "") for name in runs_view.FILTER_NAMES})
    assert form.is_valid(), form.errors
    runs = matching_runs(form.api_filters()).order_by("-slot", "-id")[:51]
    sql, params = runs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.parametrize(
    ("query", "index"),
    [
        ({}, "run_newest"),
        ({"endpoint": "acme-fast"}, "run_endpoint_newest"),
        ({"workload": "long-context"}, "run_workload_newest"),
        ({"vantage": "eu-west"}, "run_vantage_newest"),
        ({"from": "2026-03-01", "to": "2026-03-09"}, "run_newest"),
        ({"endpoint": "acme-fast", "from": "2026-03-01"}, "run_endpoint_newest"),
    ],
)
def test_it_serves_the_common_filters_and_the_order_from_an_index(fleet, query, index):
    explained = plan(query)
    assert index in explained, explained
    assert "Seq Scan on benchmarks_run" not in explained, explained
    # No sort of the runs: the index gives them newest first (a "Sort" would read every match).
    assert not re.search(r"^\s*(->\s*)?Sort\b", explained, re.M), explained


@pytest.mark.parametrize("status", [RunStatus.FAILED])
def test_it_filters_status_without_scanning_the_table(fleet, status):
    explained = plan({"status": status})
    assert "Seq Scan on benchmarks_run" not in explained, explained
    assert re.search(r"run_status|run_newest", explained), explained


def test_it_says_which_days_an_end_day_can_be(viewer, fleet):
    response = viewer.get("/runs/", {"to": "9999-12-31"})
    assert response.status_code == 400
    assert "Give a day before 9999-12-31." in response.content.decode()
