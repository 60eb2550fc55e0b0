"""The monthly report of a seeded year: its figures are the leaderboard API's for the same
windows (the month and the month before), its CSV holds the page's rows, a bad month is a 404
and an empty month says so."""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth.models import User

from alerts.monthly.month import Month
from alerts.monthly.report import build
from alerts.monthly.tables import money
from tests import dashboard_data as data
from tests import monthly_data

pytestmark = pytest.mark.django_db

JUNE = Month(2026, 6)
FIGURES = ("ttft_p25_ms", "ttft_p50_ms", "ttft_p75_ms", "decode_tps_p25", "decode_tps_p50")


@pytest.fixture(scope="module")
def year(django_db_setup, django_db_blocker):
    """One seeded year for the module (seeding it takes a while), removed afterwards."""
    with django_db_blocker.unblock(), time_machine.travel(monthly_data.NOW, tick=False):
        seeded = monthly_data.seed_year()
    yield seeded
    with django_db_blocker.unblock():
        monthly_data.remove(seeded)


@pytest.fixture
def reader(client, year):
    with time_machine.travel(monthly_data.NOW, tick=False):
        client.force_login(User.objects.create_user("ana"))
        yield client


def api_rows(client, month: Month, **query: str) -> dict[int, dict]:
    window = {"since": month.start.isoformat(), "until": month.end.isoformat(), **query}
    answer = client.get("/api/v1/leaderboard/", window)
    assert answer.status_code == 200, answer.content
    return {row["endpoint_id"]: row for row in answer.json()["rows"] if row["runs"]}


def test_it_reports_the_leaderboards_figures_for_the_month_and_the_month_before(reader, year):
    report = build(JUNE)
    june, may = api_rows(reader, JUNE), api_rows(reader, JUNE.previous)
    assert {e.endpoint_id for e in report.endpoints} == set(june) == set(may)
    for e in report.endpoints:
        for figures, board in ((e.month, june[e.endpoint_id]), (e.before, may[e.endpoint_id])):
            assert figures.runs == board["runs"] > 50  # a month of three runs a day
            for name in FIGURES:
                assert getattr(figures, name) == pytest.approx(board[name], rel=1e-12)
            assert figures.availability == pytest.approx(1 - board["error_rate"], rel=1e-12)
            assert figures.cost_per_request_usd == pytest.approx(board["cost_per_request_usd"])
    # The winners of a time of day are that bucket's board leaders for the month.
    night = api_rows(reader, JUNE, tod="0", sort="decode")
    leader = max(night.values(), key=lambda row: row["decode_tps_p50"])
    assert f"{leader['label']} @ {leader['provider']}" in report.times_of_day[0].decode


def test_it_shows_the_month_with_winners_alerts_and_advice_and_never_a_prompt(reader, year):
    page = reader.get(f"/reports/monthly/{JUNE.slug}/")
    assert page.status_code == 200
    html = page.content.decode()
    report = build(JUNE)
    first = report.endpoints[0]
    assert f"{first.month.decode_tps_p50:,.1f} tok/s" in html
    assert f"{first.month.ttft_p50_ms:,.0f} ms" in html
    assert "Acme support" in html  # the team's workload by name, among the winners
    assert year["mark"] not in html  # never its text
    assert f"#{year['resolved'].id}" in html and "resolved" in html
    assert f"#{year['old'].id}" not in html  # closed in April: not June's
    assert f"{year['endpoints'][1].label} → {year['endpoints'][0].label}" in html
    assert 'rel="prev"' in html and "May 2026" in html
    assert reader.get("/reports/monthly/").url.endswith(f"/reports/monthly/{JUNE.slug}/")


def test_it_downloads_the_pages_rows_as_csv(reader, year):
    answer = reader.get(f"/reports/monthly/{JUNE.slug}/csv/")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    text = b"".join(answer.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    html = reader.get(f"/reports/monthly/{JUNE.slug}/").content.decode()
    table = html.split('id="monthly-endpoints"')[1].split("</table>")[0]
    page_rows = [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        if "<td" in tr
    ]
    assert [f"{row['label']} @ {row['provider']}" for row in rows] == [c[0] for c in page_rows]
    for row, cells in zip(rows, page_rows, strict=True):
        assert cells[3].startswith(f"{float(row['ttft_p50_ms']):,.0f} ms")
        assert cells[5].startswith(f"{float(row['decode_tps_p50']):,.1f} tok/s")
        assert cells[7] == f"{float(row['availability']):.1%}"
        assert cells[9] == money(float(row["cost_per_request_usd"]))
        prices = (money(float(row[f"price_{way}_per_mtok"])) for way in ("in", "out"))
        assert cells[2] == " / ".join(prices)
        assert re.fullmatch(r"\d+\.\d{6}", row["cost_per_request_usd"])  # fixed, never 1e-05
        for when in ("", "before_"):  # fixed decimals, never float noise (711.8865000000001)
            for name in (*FIGURES, "decode_tps_p75"):
                assert re.fullmatch(r"\d+\.\d{3}", row[when + name]), (name, row[when + name])
            assert re.fullmatch(r"[01]\.\d{6}", row[when + "availability"]), row
            assert re.fullmatch(r"\d+", row[when + "runs"]), row
    assert year["mark"] not in text


def test_it_says_an_empty_month_has_no_data_and_refuses_a_bad_month(reader):
    empty = reader.get("/reports/monthly/2019-02/")
    assert empty.status_code == 200
    assert "There is no data for February 2019" in empty.content.decode()
    for bad in ("2026-13", "june", "2026-6", "0000-01", "9999-12", "2026-06-01"):
        assert reader.get(f"/reports/monthly/{bad}/").status_code == 404
    bad_window = reader.get("/api/v1/leaderboard/", {"since": "2026-07-01", "until": "2026-06-01"})
    assert bad_window.status_code == 400
    for since in ("not a date", "0001-01-01", "2026-02-30"):
        assert reader.get("/api/v1/leaderboard/", {"since": since}).status_code == 400


def test_one_model_at_two_providers_is_two_rows_a_reader_can_tell_apart(client):
    """A catalogue names a model the same at every provider ("Llama 3.3 70B" at Groq and at
    Cerebras; `make run`'s simulated profiles at four clouds): each row and each winner says
    its provider, instead of the same name twice ("X = X" for a tie)."""
    data.default_workloads()
    now = datetime(2027, 2, 3, 12, 0, tzinfo=UTC)
    january = Month(2027, 1)
    names = {}
    for slug, name in (("groq", "Groq"), ("cerebras", "Cerebras")):
        ep = data.endpoint(data.provider(slug, name=name), f"{slug}-llama", display_name="Llama")
        names[name] = ep
        for day in (5, 6, 7):
            data.run(ep, datetime(2027, 1, day, 10, 0, tzinfo=UTC), decode_tps=80.0, ttft_ms=400.0)
    with time_machine.travel(now, tick=False):
        client.force_login(User.objects.create_user("ana"))
        html = client.get(f"/reports/monthly/{january.slug}/").content.decode()
        report = build(january)
    table = html.split('id="monthly-endpoints"')[1].split("</table>")[0]
    firsts = [
        re.sub(r"<[^>]+>", "", cells[0]).strip()
        for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        if (cells := re.findall(r"<td[^>]*>(.*?)</td>", tr))
    ]
    assert sorted(firsts) == ["Llama @ Cerebras", "Llama @ Groq"]
    (base,) = [w for w in report.workloads if w.scope == "Base (standard prompt)"]
    assert sorted(base.decode) == ["Llama @ Cerebras", "Llama @ Groq"]  # a tie, each named
