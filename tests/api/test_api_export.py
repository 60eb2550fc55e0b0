"""REST API: CSV export of runs and samples (streamed, same filters as the runs list)."""

import csv
import gzip
import hashlib
import io

import pyarrow.parquet as pq
import pytest
from django.core import mail

from benchmarks.models import Export, ExportStatus
from dashboard.api import export as export_module
from dashboard.api.export import FOOTER_PREFIX
from dashboard.exports import jobs
from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run, make_sample

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]


def split_footer(text: str) -> tuple[str, int, str]:
    """(body, rows, sha256) of an export; fails when the footer line is missing."""
    body, _, last = text.rstrip("\r\n").rpartition("\r\n")
    assert last.startswith(FOOTER_PREFIX), f"no footer: {last!r}"
    rows, _, digest = last.removeprefix(FOOTER_PREFIX).partition(" rows, sha256 ")
    return body + "\r\n", int(rows), digest


def read_csv(response) -> list[dict[str, str]]:
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    body, count, digest = split_footer(b"".join(response.streaming_content).decode())
    assert hashlib.sha256(body.encode()).hexdigest() == digest
    rows = list(csv.DictReader(io.StringIO(body)))
    assert len(rows) == count
    return rows


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


def test_it_cuts_a_failing_stream_without_the_footer(reader, runs, monkeypatch):
    real = export_module.sample_rows

    def failing(queryset):
        header, rows = real(queryset)

        def broken():
            yield next(rows)
            raise RuntimeError("database went away")

        return header, broken()

    monkeypatch.setattr(export_module, "sample_rows", failing)
    response = reader.get("/api/v1/export/samples.csv")
    received = []
    with pytest.raises(RuntimeError):
        for chunk in response.streaming_content:
            received.append(chunk)
    assert received and FOOTER_PREFIX not in b"".join(received).decode()


@pytest.fixture
def export_dir(settings, tmp_path):
    settings.TOKSPEED_EXPORT_DIR = str(tmp_path)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    return tmp_path


def test_it_builds_a_large_samples_export_in_the_background(
    reader, plain_user, runs, export_dir, settings
):
    plain_user.email = "bob@example.com"
    plain_user.save()
    settings.TOKSPEED_EXPORT_STREAM_MAX_ROWS = 3  # six samples: too many to stream
    response = reader.get("/api/v1/export/samples.csv")
    assert response.status_code == 202
    job = response.json()
    assert job["status"] == "pending" and job["download"] is None
    export = Export.objects.get(token=job["id"])
    assert jobs.build(export.id) is True
    assert jobs.build(export.id) is False  # claimed once: a redelivery builds nothing
    done = reader.get(f"/api/v1/exports/{job['id']}/").json()
    assert done["status"] == "done" and done["rows"] == 6
    download = reader.get(done["download"].removeprefix(settings.TOKSPEED_BASE_URL))
    data = b"".join(download.streaming_content)
    assert hashlib.sha256(data).hexdigest() == done["sha256"] == download["X-Checksum-SHA256"]
    body, count, digest = split_footer(gzip.decompress(data).decode())
    assert count == 6 and hashlib.sha256(body.encode()).hexdigest() == digest
    assert len(mail.outbox) == 1 and done["download"] in mail.outbox[0].body
    assert mail.outbox[0].to == ["bob@example.com"]


def test_it_writes_parquet_on_request(reader, runs, export_dir):
    newer, older, _ = runs
    response = reader.get(
        "/api/v1/export/runs.csv", {"file_format": "parquet", "endpoint": "acme-fast"}
    )
    assert response.status_code == 202
    export = Export.objects.get(token=response.json()["id"])
    jobs.build(export.id)
    export.refresh_from_db()
    table = pq.read_table(export_dir / export.file_name)
    assert table.column("id").to_pylist() == [newer.id, older.id]
    assert table.column("ttft_p50_ms").to_pylist() == [newer.ttft_p50_ms, older.ttft_p50_ms]


def test_it_leaves_no_file_when_a_background_export_fails(reader, runs, export_dir, monkeypatch):
    response = reader.get("/api/v1/export/samples.csv", {"background": "1"})
    export = Export.objects.get(token=response.json()["id"])

    def broken(queryset):
        raise RuntimeError("database went away")

    monkeypatch.setattr(jobs, "sample_rows", broken)
    jobs.build(export.id)
    export.refresh_from_db()
    assert export.status == ExportStatus.FAILED and "went away" in export.error
    assert list(export_dir.iterdir()) == []


def test_it_expires_background_exports(reader, runs, export_dir):
    response = reader.get("/api/v1/export/runs.csv", {"background": "1"})
    export = Export.objects.get(token=response.json()["id"])
    jobs.build(export.id)
    export.refresh_from_db()
    assert (export_dir / export.file_name).exists()
    assert jobs.expire(now=export.expires_at) == 1
    assert list(export_dir.iterdir()) == []
    assert reader.get(f"/api/v1/exports/{export.token}/").status_code == 404


def test_it_keeps_background_exports_to_signed_in_users(anon, runs, export_dir, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    assert anon.get("/api/v1/export/runs.csv").status_code == 200
    response = anon.get("/api/v1/export/runs.csv", {"background": "1"})
    assert response.status_code in (401, 403)
    assert "signed-in user" in response.json()["detail"]


def test_it_says_which_days_an_export_can_end_on(reader):
    response = reader.get("/api/v1/export/runs.csv", {"to": "9999-12-31"})
    assert response.status_code == 400
    assert response.json() == {"to": ["Give a day before 9999-12-31."]}
