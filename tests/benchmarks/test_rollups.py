"""Rollups: long windows read from merged sketches agree with the exact figures."""

import dataclasses
import math
from datetime import UTC, datetime

import pytest
import time_machine

from benchmarks.derived import rebuild_all
from benchmarks.models import Run, RunRollup, WindowRollup
from benchmarks.rollups import packed, sketch, windows
from benchmarks.rollups.write import add_run, rebuild
from benchmarks.selectors import filters as filters_module
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.synthetic import seed_history

pytestmark = pytest.mark.django_db

# 01:00 UTC: a window of whole hours then starts before the day's first slot (02:00), so the
# exact window and the sketched one (whole UTC days) hold the same runs.
NOW = datetime(2026, 6, 15, 1, 0, tzinfo=UTC)
COUNTS = (
    "runs", "samples", "errors", "saturated_runs", "runs_c1", "saturated_runs_c1", "runs_c10",
    "saturated_runs_c10", "runs_peak", "saturated_runs_peak",
)  # fmt: skip
FIGURES = (
    "ttft_p25_ms", "ttft_p50_ms", "ttft_p75_ms", "decode_tps_p25", "decode_tps_p50",
    "decode_tps_p75", "e2e_p25_ms", "e2e_p50_ms", "e2e_p75_ms", "prefill_cost_ms",
    "prefill_cost_p25_ms", "prefill_cost_p75_ms", "decode_tps_c1", "decode_tps_c10",
    "decode_tps_peak", "throughput_tps", "input_tokens", "output_tokens", "cost_per_request_usd",
    "error_rate",
)  # fmt: skip


@pytest.fixture
def year():
    with time_machine.travel(NOW, tick=False):
        seed_history(endpoints=3, days=400, workloads=4, slots=3, samples_per_run=1, now=NOW)
        saturate_some()
        rebuild_all(now=NOW, only=["rollups"])
        yield


def saturate_some() -> None:
    """Every seventh run had a saturated client (seeded runs have none)."""
    ids = list(Run.objects.order_by("id").values_list("id", flat=True)[::7])
    Run.objects.filter(id__in=ids).update(saturated_count=1)


def exact(filters: BoardFilters, monkeypatch) -> list:
    with monkeypatch.context() as patch:
        patch.setattr(filters_module, "SKETCHED_WINDOW_HOURS", frozenset())
        return leaderboard(filters)


WINDOWS = ("30d", "90d", "365d")
QUERIES = ({}, {"workload": "long-context", "sort": "ttft"}, {"concurrency": "10"}, {"tod": "1"})


def test_it_keeps_every_long_window_figure_within_one_percent_of_exact(year, monkeypatch):
    # One seeded year for every window and query (seeding it costs far more than the reads).
    for window in WINDOWS:
        for query in QUERIES:
            _compare(BoardFilters.from_query({"window": window, **query}), monkeypatch)


def _compare(filters: BoardFilters, monkeypatch) -> None:
    with time_machine.travel(NOW, tick=False):
        sketched = {row.slug: row for row in leaderboard(filters)}
        truth = {row.slug: row for row in exact(filters, monkeypatch)}
    where = f"{filters}"
    assert sketched.keys() == truth.keys(), where
    compared = 0
    for slug, row in truth.items():
        for name in COUNTS:
            assert getattr(sketched[slug], name) == getattr(row, name), (where, slug, name)
        for name in FIGURES:
            want, got = getattr(row, name), getattr(sketched[slug], name)
            assert (want is None) == (got is None), (where, slug, name, want, got)
            if want is not None and want != 0:
                assert math.isclose(got, want, rel_tol=0.01), (where, slug, name, want, got)
                compared += 1
    assert compared >= len(truth) * 5, where  # the comparison really covered figures


def test_it_counts_each_finished_run_into_the_same_rollups_a_rebuild_makes(monkeypatch):
    with time_machine.travel(NOW, tick=False):
        seed_history(endpoints=2, days=6, workloads=4, slots=3, samples_per_run=1, now=NOW)
        saturate_some()
        rebuild()
    rebuilt = {_key(r): _content(r) for r in RunRollup.objects.all()}
    RunRollup.objects.all().delete()
    for run_id in Run.objects.order_by("slot", "id").values_list("id", flat=True):
        add_run(run_id)
    incremental = {_key(r): _content(r) for r in RunRollup.objects.all()}
    assert incremental == rebuilt
    assert any("prefill" in content[-1] for content in rebuilt.values())
    assert sum(content[3] for content in rebuilt.values()) > 0  # saturated runs were counted
    assert rebuild() == len(rebuilt)


def test_it_reads_sketch_quantiles_like_percentile_cont():
    values = [float(v) for v in range(1, 1001)]
    bins: dict[str, int] = {}
    for value in values:
        sketch.add(bins, value)
    sketch.add(bins, -5.0)
    sketch.add(bins, 0.0)
    low, mid, high = sketch.quantiles(bins, (0.0, 0.5, 1.0))
    assert math.isclose(low, -5.0, rel_tol=0.002)
    assert math.isclose(mid, 499.0, rel_tol=0.002)  # ranks 500/501 of 1002 values
    assert math.isclose(high, 1000.0, rel_tol=0.002)
    assert sketch.quantiles({}, (0.5,)) == [None]


def _key(rollup: RunRollup) -> tuple:
    return (
        rollup.endpoint_id, rollup.workload_id, rollup.vantage_id, rollup.concurrency,
        rollup.span, rollup.day, rollup.tod_bucket,
    )  # fmt: skip


def _content(rollup: RunRollup) -> tuple:
    return (
        rollup.runs,
        rollup.ok_count,
        rollup.error_count,
        rollup.saturated_runs,
        rollup.errors_by_category,
        rollup.sketches,
    )


def test_it_says_on_the_page_which_windows_are_sketched(client, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    long = client.get("/", {"window": "365d"}).content.decode()
    assert "The 365d window is read from daily rollups" in long
    short = client.get("/", {"window": "7d"}).content.decode()
    assert "The 7d window is exact" in short


def _windows() -> dict:
    return {
        (w.endpoint_id, w.workload_id, w.concurrency, w.tod_bucket, w.days, w.through_day): (
            w.runs,
            w.ok_count,
            w.error_count,
            sorted(packed.unpack(w.packed).tolist()),
            bytes(w.near),  # cut again from the grown sketch, as a refresh cuts it
        )
        for w in WindowRollup.objects.all()
    }


def test_it_adds_a_late_run_to_the_window_rollups_as_a_refresh_would():
    with time_machine.travel(NOW, tick=False):
        seed_history(endpoints=2, days=40, workloads=4, slots=3, samples_per_run=1, now=NOW)
    late = Run.objects.filter(
        slot__date=NOW.date().replace(day=10), workload__slug="parallel-10"
    ).order_by("id")[0]
    status = late.status
    with time_machine.travel(NOW, tick=False):
        # The windows are written while the run is still going; it finishes days late.
        Run.objects.filter(id=late.id).update(status="running")
        rebuild()
        windows.refresh(force=True)
        Run.objects.filter(id=late.id).update(status=status)
        add_run(late.id)
        incremental = _windows()
        rebuild()
        windows.refresh(force=True)
    assert incremental == _windows()
    assert {key[4] for key in incremental} == {30, 90, 365}


def test_it_shows_the_same_long_board_before_the_days_window_rollups_are_written():
    with time_machine.travel(NOW, tick=False):
        seed_history(endpoints=2, days=100, workloads=4, slots=3, samples_per_run=1, now=NOW)
        filters = BoardFilters.from_query({"window": "90d"})
        fresh = [dataclasses.asdict(row) for row in leaderboard(filters)]
        WindowRollup.objects.all().delete()
        assert not windows.is_fresh()
        assert [dataclasses.asdict(row) for row in leaderboard(filters)] == fresh
        windows.refresh()
        assert windows.is_fresh()
        assert [dataclasses.asdict(row) for row in leaderboard(filters)] == fresh


def _as_json_only() -> None:
    """Every rollup row as written before migration 0023: no packed column."""
    RunRollup.objects.update(packed=None)


@pytest.mark.parametrize("query", [{"window": "30d"}, {"window": "365d", "concurrency": "10"}])
def test_it_reads_the_same_long_board_from_packed_day_rows_as_from_their_json(year, query):
    filters = BoardFilters.from_query(query)
    rows = RunRollup.objects.all()
    assert all(r.packed == packed.pack(sketch.triples(r.sketches)) and r.packed for r in rows[:500])
    with time_machine.travel(NOW, tick=False):
        from_packed = [dataclasses.asdict(row) for row in leaderboard(filters)]
        WindowRollup.objects.all().delete()  # every day and month row is read, not only today's
        from_packed_days = [dataclasses.asdict(row) for row in leaderboard(filters)]
        _as_json_only()
        from_json = [dataclasses.asdict(row) for row in leaderboard(filters)]
    assert from_packed == from_packed_days == from_json
    assert any(row["ttft_p50_ms"] for row in from_json)


def test_it_packs_every_rollup_row_a_run_finishes_into_as_its_json_says():
    with time_machine.travel(NOW, tick=False):
        seed_history(endpoints=1, days=3, workloads=4, slots=3, samples_per_run=1, now=NOW)
    RunRollup.objects.all().delete()
    for run_id in Run.objects.order_by("slot", "id").values_list("id", flat=True):
        add_run(run_id)
    rows = list(RunRollup.objects.all())
    assert rows and all(r.packed == packed.pack(sketch.triples(r.sketches)) for r in rows)
    assert any(len(packed.unpack(r.packed)) > 6 for r in rows)  # more than one run's bins


def test_it_fills_the_packed_column_of_rows_written_before_it():
    import importlib
    from types import SimpleNamespace

    from django.db import connection

    migration = importlib.import_module("benchmarks.migrations.0024_runrollup_packed")
    with time_machine.travel(NOW, tick=False):
        seed_history(endpoints=1, days=40, workloads=4, slots=3, samples_per_run=1, now=NOW)
    written = {r.id: bytes(r.packed) for r in RunRollup.objects.all()}
    _as_json_only()
    migration.fill_packed(None, SimpleNamespace(connection=connection))
    assert {r.id: bytes(r.packed) for r in RunRollup.objects.all()} == written
