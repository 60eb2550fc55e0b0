"""A run whose client fell behind the stream says so wherever its ITL or decode is shown."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.utils.html import strip_tags
from rich.console import Console

from benchmarks.management.commands.run_now import describe
from benchmarks.management.commands.speedtest import _Report, _row
from benchmarks.measure import Measurement
from benchmarks.models import Run
from benchmarks.stats import summarize
from tests.api_factories import make_endpoint, make_provider, make_run, make_sample, token_client

pytestmark = pytest.mark.django_db

SLOT = datetime(2026, 3, 10, 12, tzinfo=UTC)


def sample(saturated: bool, **fields: object) -> Measurement:
    return Measurement(
        started_at=SLOT, t0_ns=0, saturated=saturated, decode_tps=50.0, itl_p50_ms=20.0, **fields
    )


def test_it_counts_the_saturated_samples_of_a_run_but_not_failed_ones():
    samples = [sample(True), sample(True), sample(False), sample(True, error_category="timeout")]

    assert summarize(samples)["saturated"] == 2


@pytest.fixture
def saturated_run(django_user_model) -> Run:
    run = make_run(make_endpoint(make_provider("acme")), SLOT, ok=5)
    Run.objects.filter(id=run.id).update(saturated_count=3)
    return run


def test_it_flags_the_run_page_and_the_runs_list(client, django_user_model, saturated_run):
    client.force_login(django_user_model.objects.create_user("viewer"))

    page = client.get(f"/runs/{saturated_run.id}/").content.decode()
    listing = client.get("/runs/").content.decode()

    assert "client saturated in 3 of 5" in page
    assert "client saturated" in listing


def test_it_gives_the_count_in_the_api(django_user_model, saturated_run):
    api = token_client(django_user_model.objects.create_user("script"))

    detail = api.get(f"/api/v1/runs/{saturated_run.id}/").json()
    listed = api.get("/api/v1/runs/").json()["results"][0]

    assert detail["saturated_count"] == 3 and listed["saturated_count"] == 3


def test_it_says_on_the_run_page_and_in_the_api_why_an_itl_figure_is_missing(
    client, django_user_model, saturated_run
):
    withheld = {"itl_p50_ms": None, "itl_p90_ms": None, "itl_p99_ms": None, "itl_max_ms": None}
    make_sample(saturated_run, 0, saturated=True, itl_withheld="all", **withheld)
    make_sample(saturated_run, 1, itl_p50_ms=20.0, itl_p99_ms=None, itl_withheld="tail")
    make_sample(saturated_run, 2, itl_p50_ms=20.0, itl_p99_ms=31.0)
    client.force_login(django_user_model.objects.create_user("viewer"))
    api = token_client(django_user_model.objects.create_user("script"))

    page = client.get(f"/runs/{saturated_run.id}/").content.decode()
    rows = api.get(f"/api/v1/runs/{saturated_run.id}/samples/").json()["results"]

    found = re.findall(r'<td class="num itl">(.*?)</td>', page)
    cells = [" ".join(strip_tags(cell).split()) for cell in found]
    assert cells[0] == "saturated" and "20" in cells[1] and cells[1].endswith("burst")
    assert "31" in cells[2] and "burst" not in cells[2] and "saturated" not in cells[2]
    assert [(r["itl_p50_ms"], r["itl_withheld"]) for r in rows] == [
        (None, "all"),
        (20.0, "tail"),
        (20.0, ""),
    ]


def test_speedtest_rows_say_why_an_itl_figure_is_missing():
    tail = sample(False, itl_p99_ms=None, itl_withheld="tail", output_tokens=5)
    saturated = sample(True, itl_withheld="all", output_tokens=5)
    saturated.itl_p50_ms = None

    assert _row("1", tail).split()[6:8] == ["20.00", "burst"]
    assert _row("2", saturated).split()[6:8] == ["sat.", "sat."]


def test_run_now_says_when_the_client_was_saturated(saturated_run):
    plain = make_run(make_endpoint(make_provider("other"), "other-fast"), SLOT, ok=5)

    assert "client saturated in 3 of 5 requests" in describe(Run.objects.get(id=saturated_run.id))
    assert "saturated" not in describe(plain)


def test_speedtest_says_under_its_table_how_many_tails_were_withheld():
    out = StringIO()
    report = _Report(
        Console(file=out, width=200), label="x", simulated=False, quiet=False, concurrency=2
    )
    tail = sample(False, itl_p99_ms=None, itl_withheld="tail", output_tokens=5)
    report.summary(summarize([tail, sample(False, itl_p99_ms=31.0, output_tokens=5)]))

    assert "ITL tail withheld in 1 of 2 requests" in out.getvalue()
    assert "client saturated" not in out.getvalue()
