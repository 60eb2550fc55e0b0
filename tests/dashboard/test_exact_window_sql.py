"""The exact windows' SQL (72 h, 7 d, and any explicit window) gives the answers of the plain
grouped queries it replaced, on seeded runs: same floats, same endpoints, every filter."""

import random
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection

from benchmarks.models import Run, RunStatus
from benchmarks.selectors import board_endpoints, board_figures
from benchmarks.selectors import board_queries as queries
from benchmarks.selectors import leaderboard as board
from benchmarks.selectors.aggregates import Quartiles
from benchmarks.selectors.exact_sql import ExactWindow, primary_workloads
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.scope import Workloads, resolve_vantage, window_runs
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 11, 15, 7, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def defaults():
    data.default_workloads()
    data.vantage()


@pytest.fixture
def history():
    """Nine endpoints with base and long-context runs in the same slots over ten days (every
    endpoint's slots at the same hours, as the schedule makes them), with the cases the pairing
    must get right: a long run without its base run, a base run without a TTFT, failed,
    queued and downgraded runs, and an endpoint with base runs only."""
    rng = random.Random(33)
    base, long = data.workload("base"), data.workload("long-context")
    slots = data.recent_slots(30, now=NOW)
    endpoints = [data.endpoint(data.provider(f"p{i}"), f"e{i}") for i in range(9)]
    for number, ep in enumerate(endpoints):
        for index, slot in enumerate(slots):
            first = rng.uniform(200, 900)
            if not (number == 1 and index % 4 == 0):  # e1: some slots lack the base run
                data.run(ep, slot, wl=base, ttft_ms=None if index % 11 == 5 else first)
            if number == 8:
                continue  # e8: base runs only, no prefill figure
            status = None
            if index % 9 == 3:
                status = RunStatus.QUEUED  # not finished: never paired
            elif index % 13 == 2:
                status = RunStatus.FAILED  # finished: paired when it has a TTFT
            made = data.run(
                ep, slot, wl=long, ttft_ms=first + rng.uniform(1000, 4000), status=status
            )
            if index % 7 == 6:
                made.downgraded = True  # prefill pairs it: a lane does not change the delta
                made.save(update_fields=["downgraded"])
    return endpoints


@pytest.fixture
def concurrency_runs(history):
    """Runs of the parallel and peak workloads for most endpoints; e2 ran its peak workload
    at two concurrencies in the window, e3's parallel runs include saturated ones."""
    rng = random.Random(34)
    slots = data.recent_slots(30, now=NOW)
    for number, ep in enumerate(history[:7]):
        for index, slot in enumerate(slots):
            decode = rng.uniform(20, 90)
            data.run(
                ep,
                slot,
                wl=data.workload("parallel-10"),
                decode_tps=decode,
                throughput_tps=decode * 9.5,
            )
            made = data.run(
                ep,
                slot,
                wl=data.workload("peak"),
                decode_tps=decode / 2,
                throughput_tps=decode * 20,
                concurrency=48 if number == 2 and index % 2 else 32,
            )
            if number == 3 and index % 5 == 0:
                made.saturated_count = 2
                made.save(update_fields=["saturated_count"])
    return history


FILTERS = [
    BoardFilters(window_hours=24),
    BoardFilters(window_hours=72),
    BoardFilters(window_hours=168),
    BoardFilters(window_hours=168, tod_bucket=1),
    BoardFilters(window_hours=72, workload="long-context", sort="ttft"),
    BoardFilters(
        window_hours=168,
        since=NOW - timedelta(days=6, hours=5),
        until=NOW - timedelta(days=1, hours=2),
    ),
]


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: f"{f.window_hours}h-{f.tod_bucket}")
def test_prefill_pairs_by_hash_join_are_the_grouped_pairs(history, filters):
    workloads = Workloads.load()
    vantage = resolve_vantage(None)
    chosen = [history[1].id, history[5].id, history[8].id]
    with time_machine.travel(NOW, tick=False):
        for endpoint_ids in (None, chosen):
            parts = {
                "base": workloads.base(),
                "long": workloads.long(),
                "vantage": vantage,
                "filters": filters,
                "endpoint_ids": endpoint_ids,
            }
            joined = sorted(queries.prefill_hash_join(connection, **parts))
            grouped = sorted(
                (endpoint_id, *Quartiles.split(value))
                for endpoint_id, value in queries.prefill_grouped(connection, **parts)
            )
            assert joined == grouped
            assert joined, "the seeded history pairs runs in every window"


GROUPED = [
    *FILTERS,
    BoardFilters(window_hours=168, workload="parallel-10"),
    BoardFilters(window_hours=168, workload="peak", tod_bucket=2),
    BoardFilters(window_hours=72, concurrency=10),
    BoardFilters(window_hours=168, concurrency=1),
    BoardFilters(window_hours=168, concurrency="peak"),
    BoardFilters(window_hours=168, workload="parallel-10", concurrency=10),
    BoardFilters(window_hours=168, workload="base", concurrency="peak"),
]


@pytest.mark.parametrize(
    "filters", GROUPED, ids=lambda f: f"{f.window_hours}h-{f.workload}-{f.concurrency}"
)
def test_the_exact_window_statements_read_what_the_querysets_read(concurrency_runs, filters):
    workloads = Workloads.load()
    vantage = resolve_vantage(None)
    chosen = [concurrency_runs[2].id, concurrency_runs[3].id, concurrency_runs[8].id]
    where, workload = queries.primary(filters, workloads)
    shared = workload is not None and workload in workloads.base_context()
    shared = shared and filters.concurrency is None
    every = [w.id for w in workloads.base_context()]
    with time_machine.travel(NOW, tick=False):
        for endpoint_ids in (None, chosen):
            runs = window_runs(
                vantage=vantage,
                window_hours=filters.window_hours,
                tod_bucket=filters.tod_bucket,
                start=filters.since,
                end=filters.until,
            )
            if endpoint_ids is not None:
                runs = runs.filter(endpoint_id__in=endpoint_ids)
            window = ExactWindow(
                filters, vantage=vantage, endpoint_ids=endpoint_ids, database="default"
            )
            ids, concurrency = primary_workloads(filters, workloads)

            read = window.primary_stats(ids, concurrency=concurrency, shared=shared)
            queried = queries.primary_stats(runs.filter(where), shared=workload if shared else None)
            assert _by_endpoint(read) == _by_endpoint(queried)

            read = window.concurrency_groups(every, chosen)
            queried = queries.concurrency_groups(runs.filter(queries.in_workloads(every, chosen)))
            assert _sorted(read) == _sorted(queried)
            assert read or filters.tod_bucket is not None, "groups in every all-day window"


def _by_endpoint(rows):
    return {row["endpoint_id"]: sorted(row.items()) for row in rows}


def _sorted(rows):
    return sorted(sorted(row.items()) for row in rows)


def test_the_prefill_read_leaves_the_join_settings_as_it_found_them(history):
    with connection.cursor() as cursor:
        cursor.execute("SET enable_nestloop = off")  # a caller's own choice is kept too
        with time_machine.travel(NOW, tick=False):
            rows = board.leaderboard(BoardFilters(window_hours=72))
        cursor.execute(
            "SELECT current_setting('enable_mergejoin'), current_setting('enable_nestloop')"
        )
        settings = cursor.fetchone()
        cursor.execute("RESET enable_nestloop")
    assert settings == ("on", "off")
    assert any(row.prefill_cost_ms is not None for row in rows)


@pytest.mark.parametrize(
    "filters", GROUPED, ids=lambda f: f"{f.window_hours}h-{f.workload}-{f.concurrency}"
)
def test_the_exact_figures_are_what_exact_and_stored_figures_give(concurrency_runs, filters):
    workloads = Workloads.load()
    vantage = resolve_vantage(None)
    chosen = [concurrency_runs[2].id, concurrency_runs[3].id, concurrency_runs[8].id]
    with time_machine.travel(NOW, tick=False):
        for endpoint_ids in (None, chosen):
            parts = {"vantage": vantage, "endpoint_ids": endpoint_ids, "workloads": workloads}
            stats, by_concurrency, prefill, _ = board._exact(filters, **parts)
            expected = board_figures.stored_figures(stats, by_concurrency, prefill)
            assert board_figures.exact_stored_figures(filters, **parts) == expected
            assert expected or filters.tod_bucket is not None


def test_a_whole_boards_last_runs_are_each_endpoints_newest_run():
    """More endpoints than are probed one by one: the newest runs since a day ago, and a probe
    for each endpoint without one (its newest run older, or none): the same (slot, status) as
    ordering each endpoint's runs, whatever their status or age, a queued future one too."""
    base, long = data.workload("base"), data.workload("long-context")
    vantage = resolve_vantage(None)
    endpoints = [data.endpoint(data.provider(f"q{i}"), f"f{i}") for i in range(26)]
    for number, ep in enumerate(endpoints):
        if number == 25:
            continue  # no runs at all
        age = timedelta(days=3) if number % 4 == 0 else timedelta(hours=2)  # older than a day
        data.run(ep, NOW - age - timedelta(hours=8), wl=base, status=RunStatus.FAILED)
        data.run(ep, NOW - age, wl=base)
        data.run(ep, NOW - timedelta(hours=1), wl=long)  # another workload: not the board's
        if number == 3:
            data.run(ep, NOW + timedelta(hours=6), wl=base, status=RunStatus.QUEUED)
    ids = [ep.id for ep in endpoints]
    with time_machine.travel(NOW, tick=False):
        found = board_endpoints.last_runs(ids, workload_ids=[base.id], vantage=vantage)
    expected = {}
    for ep in endpoints:
        newest = (
            Run.objects.filter(endpoint=ep, workload=base, vantage=vantage)
            .order_by("-slot")
            .values_list("slot", "status")
            .first()
        )
        if newest is not None:
            expected[ep.id] = newest
    assert found == expected
    assert found[endpoints[3].id] == (NOW + timedelta(hours=6), RunStatus.QUEUED)
    assert found[endpoints[4].id] == (NOW - timedelta(days=3), RunStatus.DONE)
