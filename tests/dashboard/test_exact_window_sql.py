"""The exact windows' SQL (72 h, 7 d, and any explicit window) gives the answers of the plain
grouped queries it replaced, on seeded runs: same floats, same endpoints, every filter."""

import random
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection

from benchmarks.models import RunStatus
from benchmarks.selectors import leaderboard as board
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.scope import Workloads, resolve_vantage
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
            reads = [
                sorted(
                    read(
                        connection,
                        base=workloads.base(),
                        long=workloads.long(),
                        vantage=vantage,
                        filters=filters,
                        endpoint_ids=endpoint_ids,
                    )
                )
                for read in (board._prefill_hash_join, board._prefill_grouped)
            ]
            assert reads[0] == reads[1]
            assert reads[0], "the seeded history pairs runs in every window"


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
