"""REST API: CSV export of runs and samples (streamed, same filters as the runs list)."""

import csv
import io

import pytest

from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run, make_sample

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]


def read_csv(response) -> list[dict[str, str]]:
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def runs():
    acme = make_endpoint(make_provider("acme"), "acme-fast")
    other = make_endpoint(make_provider("other", simulated=True), "other-slow")
    newer = make_run(acme, hours_ago(1), ttft_ms=250.0)
    older = make_run(acme, hours_ago(30), ttft_ms=260.0)
    theirs = make_run(other, hours_ago(2), ttft_ms=900.0)
    for run in (newer, older, theirs):
        for index in range(2):
            make_sample(run, index, ttft_ms=run.ttft_p50_ms + index)
    return newer, older, theirs


def test_it_exports_filtered_runs_newest_first(reader, runs):
    newer, older, _ = runs
    rows = read_csv(reader.get("/api/v1/export/runs.csv", {"endpoint": "acme-fast"}))
    assert [int(row["id"]) for row in rows] == [newer.id, older.id]
    assert float(rows[0]["ttft_p50_ms"]) == newer.ttft_p50_ms
    assert rows[0]["endpoint"] == "acme-fast" and rows[0]["simulated"] == "False"


def test_it_exports_samples_with_their_runs_context_and_every_metric(reader, runs):
    _, _, theirs = runs
    rows = read_csv(reader.get("/api/v1/export/samples.csv", {"provider": "other"}))
    assert [(int(r["run"]), int(r["index"])) for r in rows] == [(theirs.id, 0), (theirs.id, 1)]
    samples = list(theirs.samples.order_by("index"))
    for row, sample in zip(rows, samples, strict=True):
        assert float(row["ttft_ms"]) == sample.ttft_ms
        assert float(row["e2e_ms"]) == sample.total_ms
        assert row["endpoint"] == "other-slow" and row["simulated"] == "True"
        assert row["ok"] == "True"
    for column in ("ttfb_ms", "first_event_ms", "decode_tps", "tpot_ms", "itl_p99_ms", "chunks"):
        assert rows[0][column] != ""


def test_it_exports_by_time_range(reader, runs):
    newer, _, theirs = runs
    since = hours_ago(3).isoformat()
    rows = read_csv(reader.get("/api/v1/export/runs.csv", {"since": since}))
    assert {int(row["id"]) for row in rows} == {newer.id, theirs.id}


@pytest.mark.parametrize("path", ["/api/v1/export/runs.csv", "/api/v1/export/samples.csv"])
def test_it_answers_400_for_a_bad_export_filter(reader, path):
    response = reader.get(path, {"since": "last tuesday"})
    assert response.status_code == 400
    assert "since" in response.json()


def test_it_writes_export_errors_as_csv_when_csv_was_asked(reader):
    response = reader.get("/api/v1/export/runs.csv", {"status": "exploded"}, HTTP_ACCEPT="text/csv")
    assert response.status_code == 400
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["field", "message"] and rows[1][0] == "status"


def test_it_keeps_exports_behind_login_when_the_dashboard_is_private(anon, private, runs):
    assert anon.get("/api/v1/export/samples.csv").status_code == 401
