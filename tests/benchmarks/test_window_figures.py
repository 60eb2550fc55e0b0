"""The 72 h / 7 d boards kept exact by the write side: a read of the kept rows is the exact read,
whatever rows are fresh, expired or missing; a run landing rewrites its endpoint's rows; a row
whose oldest run left the window is not served."""

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks.dispatch import fail_unpublished_runs
from benchmarks.models import Run, RunStatus, WindowFigures
from benchmarks.rollups import write
from benchmarks.selectors import leaderboard as board_module
from benchmarks.selectors import window_figures
from benchmarks.selectors import window_figures_write as kept
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.selectors.materialized import covered
from benchmarks.selectors.scope import Workloads, resolve_vantage
from benchmarks.synthetic import seed_history

pytestmark = pytest.mark.django_db

# 23:00 UTC: today's three slots (02:00, 10:00, 18:00, buckets 0, 1 and 3) have run.
LATE = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)
COVERED = (
    {},
    {"workload": "long-context", "sort": "ttft"},
    {"workload": "parallel-10"},
    {"concurrency": "1"},
    {"concurrency": "10"},
    {"concurrency": "peak", "sort": "decode_peak"},
    {"tod": "0"},
    {"tod": "2"},
    {"tod": "3", "workload": "long-context"},
)
WINDOWS = ("72h", "7d")


@pytest.fixture
def history():
    with time_machine.travel(LATE, tick=False):
        seed_history(endpoints=3, days=10, workloads=4, slots=3, samples_per_run=1, now=LATE)
        yield


def _board(query: dict[str, str]) -> tuple[list[dict], bool]:
    """The board as a user gets it (without the figures' JSON text, which only kept rows
    carry), and whether the read computed any endpoint from the runs."""
    with CaptureQueriesContext(connection) as captured:
        rows = [
            dataclasses.asdict(row) | {"figures_json": ""}
            for row in leaderboard(BoardFilters.from_query(query))
        ]
    computed = any('"benchmarks_run"' in q["sql"] and "GROUP BY" in q["sql"] for q in captured)
    return rows, computed


def _exact(query: dict[str, str], monkeypatch) -> list[dict]:
    """The same board read exactly from the runs, the kept rows set aside."""
    with monkeypatch.context() as patched:
        patched.setattr(board_module.window_figures, "holds", lambda *a, **k: False)
        rows, computed = _board(query)
    assert computed
    return rows


def _every_board(monkeypatch, *, computed: bool | None = None) -> None:
    for window in WINDOWS:
        for query in COVERED:
            query = {"window": window, **query}
            rows, did_compute = _board(query)
            assert rows == _exact(query, monkeypatch), query
            if computed is not None:
                assert did_compute == computed, query


def test_the_seeded_rows_read_as_the_exact_board_without_computing_any(history, monkeypatch):
    with time_machine.travel(LATE, tick=False):
        assert WindowFigures.objects.exists(), "the seeded history's rows were written"
        _every_board(monkeypatch, computed=False)
        rows, _ = _board({"window": "72h"})
    assert sum(1 for row in rows if row["ttft_p50_ms"]) == 3


def test_expired_and_missing_rows_are_computed_into_the_same_board(history, monkeypatch):
    with time_machine.travel(LATE, tick=False):
        endpoint_id = WindowFigures.objects.order_by("endpoint_id")[0].endpoint_id
        WindowFigures.objects.filter(endpoint_id=endpoint_id, hours=168).delete()
    # 03:00 the next day: the 02:00 slot of three days before left the 72 h window (all day's
    # and bucket 0's rows expired); buckets 1 and 3 still hold; 7 d is missing one endpoint.
    with time_machine.travel(LATE + timedelta(hours=4), tick=False):
        assert {row["tod_bucket"] for row in _expired(72, LATE + timedelta(hours=4))} == {
            window_figures.ALL,
            0,
        }
        _every_board(monkeypatch)
        assert _board({"window": "72h", "tod": "1"})[1] is False
        assert _board({"window": "72h"})[1] is True
        assert _board({"window": "7d", "tod": "3"})[1] is True


def _expired(hours: int, now: datetime) -> list[dict]:
    return list(WindowFigures.objects.filter(hours=hours, exact_until__lt=now).values("tod_bucket"))


def test_a_row_whose_oldest_run_left_the_window_is_not_served(history):
    vantage = resolve_vantage(None)
    filters = BoardFilters(window_hours=72)
    with time_machine.travel(LATE, tick=False):
        row = WindowFigures.objects.filter(hours=72, tod_bucket=window_figures.ALL).first()
        oldest = Run.objects.filter(
            endpoint_id=row.endpoint_id, vantage=vantage, slot__gte=LATE - timedelta(hours=72)
        ).order_by("slot")[0]
        assert row.exact_until == oldest.slot + timedelta(hours=72)
    for at, served in ((row.exact_until, True), (row.exact_until + timedelta(seconds=1), False)):
        with time_machine.travel(at, tick=False):
            read = window_figures.read(filters, vantage=vantage, workloads=Workloads.load(), now=at)
            assert (row.endpoint_id in read) is served, at


def test_the_beat_task_rewrites_only_the_rows_that_stopped_being_exact(history, monkeypatch):
    later = LATE + timedelta(hours=4)
    with time_machine.travel(later, tick=False):
        stale = WindowFigures.objects.exclude(exact_until=None).filter(exact_until__lt=later)
        expired = stale.count()
        assert expired
        # All day's and bucket 0's rows of both windows (the 02:00 slots of three and seven
        # days before left them): every filter's of every endpoint, no other row.
        assert {(r.hours, r.tod_bucket) for r in stale} == {
            (hours, bucket) for hours in window_figures.HOURS for bucket in (window_figures.ALL, 0)
        }
        assert expired == 3 * len(covered(Workloads.load())) * 2 * 2
        assert kept.refresh() == expired
        assert not stale.all().exists()
        _every_board(monkeypatch, computed=False)
        assert kept.refresh() == 0


def test_a_run_landing_rewrites_its_endpoints_rows(history, monkeypatch):
    query = {"window": "72h"}
    with time_machine.travel(LATE, tick=False):
        run = Run.objects.filter(
            slot__date=LATE.date(), workload__slug="base", status=RunStatus.DONE
        ).order_by("id")[0]
        # The run is still going when the rows are written; then it finishes, slow.
        Run.objects.filter(id=run.id).update(status="running")
        kept.rebuild()
        before = {row["slug"]: row for row in _board(query)[0]}
        Run.objects.filter(id=run.id).update(status=run.status, ttft_p50_ms=90_000.0)
        write.add_run(run.id)
        rows, computed = _board(query)
        assert not computed, "the landed run's endpoint was computed by the read"
        assert rows == _exact(query, monkeypatch)
        bucket_rows, computed = _board({**query, "tod": str(run.tod_bucket)})
        assert not computed
    after = {row["slug"]: row for row in rows}
    slug = run.endpoint.slug
    assert after[slug]["runs"] == before[slug]["runs"] + 1
    others = [s for s in before if s != slug]
    assert others and all(after[s] == before[s] for s in others)


def test_a_run_failed_unstarted_drops_its_endpoints_rows(history, monkeypatch):
    # A run that never started is failed by the tick without being counted by a writer; it
    # counts in the exact window all the same.
    with time_machine.travel(LATE, tick=False):
        run = Run.objects.filter(slot__date=LATE.date(), status=RunStatus.DONE).order_by("id")[0]
        Run.objects.filter(id=run.id).update(status=RunStatus.QUEUED, publishes=99)
        kept.rebuild()
        assert fail_unpublished_runs(now=LATE) == 1
        assert not WindowFigures.objects.filter(endpoint_id=run.endpoint_id).exists()
        _every_board(monkeypatch)


def _api(client, query: dict[str, str], accept: str) -> bytes:
    response = client.get("/api/v1/leaderboard/", query, HTTP_ACCEPT=accept)
    assert response.status_code == 200, response.content
    return response.content


def test_the_api_answers_byte_for_byte_as_the_exact_read(history, client, settings, monkeypatch):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    settings.TOKSPEED_RESPONSE_CACHE = False
    accepts = ("application/json", "application/json; indent=2")
    with time_machine.travel(LATE, tick=False):
        WindowFigures.objects.filter(
            endpoint_id=WindowFigures.objects.order_by("endpoint_id")[0].endpoint_id
        ).delete()  # one endpoint computed by the read, two spliced from their rows
        for window in WINDOWS:
            for query in COVERED:
                query = {"window": window, **query}
                served = [_api(client, query, accept) for accept in accepts]
                assert b"\\u0001" not in served[0]
                with monkeypatch.context() as patched:
                    patched.setattr(board_module.window_figures, "holds", lambda *a, **k: False)
                    exact = [_api(client, query, accept) for accept in accepts]
                assert served == exact, query
