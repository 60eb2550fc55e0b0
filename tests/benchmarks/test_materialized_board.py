"""The materialized long-window board: the merged board's figures, read as one row per
endpoint; a run landing moves it at once; anything it does not hold is merged as before."""

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks.models import BoardFigures, BoardFiguresDay, Run, RunStatus, Workload
from benchmarks.rollups import windows, write
from benchmarks.selectors import materialized_write as materialized
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.synthetic import seed_history

pytestmark = pytest.mark.django_db

# 23:00 UTC: today's three slots (02:00, 10:00, 18:00) have run, so every window row is merged
# with today's day rows.
LATE = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)
COVERED = (
    {},
    {"workload": "long-context", "sort": "ttft"},
    {"workload": "parallel-10"},
    {"concurrency": "1"},
    {"concurrency": "10"},
    {"concurrency": "peak"},
    {"tod": "0"},
    {"tod": "3", "workload": "long-context"},
)
ROLLUP_TABLES = ('"benchmarks_windowrollup"', '"benchmarks_runrollup"')


@pytest.fixture
def history():
    with time_machine.travel(LATE, tick=False):
        seed_history(endpoints=3, days=100, workloads=4, slots=3, samples_per_run=1, now=LATE)
        yield


def _board(query: dict[str, str]) -> tuple[list[dict], bool]:
    """The board as a user gets it, and whether it read any rollup row (merged). Without the
    figures' JSON text, which only the materialized rows keep (test_api_boards checks the API
    writes the same answer either way)."""
    with CaptureQueriesContext(connection) as captured:
        board = leaderboard(BoardFilters.from_query(query))
        rows = [dataclasses.asdict(row) | {"figures_json": ""} for row in board]
    merged = any(table in q["sql"] for q in captured for table in ROLLUP_TABLES)
    return rows, merged


def _merged(query: dict[str, str]) -> list[dict]:
    """The same board merged from the rollups (the materialized rows set aside)."""
    day = list(BoardFiguresDay.objects.values("vantage_id", "day", "signature"))
    BoardFiguresDay.objects.all().delete()
    rows, merged = _board(query)
    assert merged
    BoardFiguresDay.objects.bulk_create(BoardFiguresDay(**fields) for fields in day)
    return rows


def test_it_reads_every_covered_long_board_as_the_merge_would(history):
    with time_machine.travel(LATE, tick=False):
        assert BoardFiguresDay.objects.exists(), "the seeded history's board was written"
        for window in ("30d", "90d", "365d"):
            for query in COVERED:
                query = {"window": window, **query}
                rows, merged = _board(query)
                assert not merged, f"{query}: read from the rollups, not the materialized rows"
                assert rows == _merged(query), query
                assert sum(1 for row in rows if row["ttft_p50_ms"]) == 3, query


def test_a_run_landing_moves_the_board_at_once(history):
    query = {"window": "30d"}
    with time_machine.travel(LATE, tick=False):
        run = Run.objects.filter(
            slot__date=LATE.date(), workload__slug="base", status=RunStatus.DONE
        ).order_by("id")[0]
        # The run is still going when the day's board is written; then it finishes, slow.
        Run.objects.filter(id=run.id).update(status="running")
        write.rebuild()
        windows.refresh(force=True)
        materialized.refresh()
        before = {row["slug"]: row for row in _board(query)[0]}
        Run.objects.filter(id=run.id).update(status=run.status, ttft_p50_ms=90_000.0)
        write.add_run(run.id)
        rows, merged = _board(query)
        after = {row["slug"]: row for row in rows}
        assert not merged
        assert rows == _merged(query)
    slug = run.endpoint.slug
    assert after[slug]["runs"] == before[slug]["runs"] + 1
    others = [s for s in before if s != slug]
    assert others and all(after[s] == before[s] for s in others)


def test_it_merges_until_the_days_board_is_written(history):
    next_day = LATE + timedelta(hours=2)  # 01:00 the next day: yesterday's rows are stale
    with time_machine.travel(next_day, tick=False):
        windows.refresh()
        rows, merged = _board({"window": "90d"})
        assert merged, "yesterday's materialized rows were read"
        materialized.refresh()
        assert BoardFigures.objects.filter(day__lt=next_day.date()).count() == 0
        again, merged = _board({"window": "90d"})
        assert not merged
    assert again == rows


def test_it_merges_a_board_it_does_not_hold(history):
    with time_machine.travel(LATE, tick=False):
        for query in (
            {"window": "30d", "workload": "long-context", "concurrency": "1"},
            {"window": "7d"},
        ):
            rows, merged = _board(query)
            assert merged or query["window"] == "7d"
            assert any(row["ttft_p50_ms"] for row in rows)


def test_a_failed_write_sends_every_board_back_to_the_merge(history, monkeypatch):
    with time_machine.travel(LATE, tick=False):
        run = Run.objects.filter(slot__date=LATE.date(), status=RunStatus.DONE).order_by("id")[0]
        Run.objects.filter(id=run.id).update(status="running")
        write.rebuild()
        windows.refresh(force=True)
        materialized.refresh()
        Run.objects.filter(id=run.id).update(status=run.status)

        def broken(*args, **kwargs):
            raise RuntimeError("no figures")

        monkeypatch.setattr(materialized, "_figures", broken)
        write.add_run(run.id)
        rows, merged = _board({"window": "365d"})
    assert merged, "stale materialized rows were read after a failed write"
    runs = {row["slug"]: row["runs"] for row in rows}
    first_day = (LATE - timedelta(days=365)).date()
    counted = Run.objects.filter(
        endpoint=run.endpoint,
        workload__slug="base",
        slot__date__gte=first_day,
        status__in=Run.FINISHED,
        downgraded=False,
    )
    assert runs[run.endpoint.slug] == counted.count()  # the landed run is counted


def test_a_workload_added_sends_the_board_back_to_the_merge_until_written_again(history):
    with time_machine.travel(LATE, tick=False):
        Workload.objects.create(slug="parallel-20", name="20 users", concurrency=20)
        rows, merged = _board({"window": "30d"})
        assert merged, "rows merged for the workloads as they were were read"
        materialized.refresh()  # the beat task's next round
        again, merged = _board({"window": "30d"})
        assert not merged
    assert again == rows


def _api(client, query: dict[str, str], accept: str) -> bytes:
    response = client.get("/api/v1/leaderboard/", query, HTTP_ACCEPT=accept)
    assert response.status_code == 200, response.content
    return response.content


def test_the_api_writes_the_materialized_board_byte_for_byte_as_the_merged_one(
    history, client, settings
):
    # Each row's figures are spliced in as the write side wrote them (dashboard/api/spliced.py);
    # the merged board's rows are written by the renderer from their values.
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    settings.TOKSPEED_RESPONSE_CACHE = False
    accepts = ("application/json", "application/json; indent=2")
    with time_machine.travel(LATE, tick=False):
        for window in ("30d", "365d"):
            for query in COVERED:
                query = {"window": window, **query}
                board = leaderboard(BoardFilters.from_query(query), texts=True)
                assert sum(1 for row in board if row.figures_json) == 3, query
                assert not any(
                    row.figures_json for row in leaderboard(BoardFilters.from_query(query))
                )
                read = [_api(client, query, accept) for accept in accepts]
                assert b"\\u0001" not in read[0]
                day = list(BoardFiguresDay.objects.values("vantage_id", "day", "signature"))
                BoardFiguresDay.objects.all().delete()
                assert not any(
                    row.figures_json
                    for row in leaderboard(BoardFilters.from_query(query), texts=True)
                )
                merged = [_api(client, query, accept) for accept in accepts]
                BoardFiguresDay.objects.bulk_create(BoardFiguresDay(**fields) for fields in day)
                assert read == merged, query
