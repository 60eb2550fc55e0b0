"""Near sketches: a long board read from each window row's bins around its quartiles shows
exactly the figures of its whole sketch, with or without today's runs."""

import dataclasses
import importlib
from datetime import UTC, datetime
from types import SimpleNamespace

import numpy as np
import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks.models import WindowRollup
from benchmarks.rollups import packed, sketch, windows
from benchmarks.selectors import materialized_write as materialized
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.synthetic import seed_history

# 23:00 UTC: today's three slots (02:00, 10:00, 18:00) have run, so a board merges today's
# day rows into every window row.
LATE = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)
METRICS = ("ttft", "decode", "prefill")
QUERIES = (
    {"window": "30d"},
    {"window": "90d", "workload": "long-context", "sort": "ttft"},
    {"window": "365d"},
    {"window": "365d", "concurrency": "10"},
    {"window": "365d", "concurrency": "peak"},
    {"window": "365d", "tod": "1"},
)


def _packed(rng: np.random.Generator, size: int, scale: float) -> bytes:
    sketches: dict[str, dict[str, int]] = {}
    for metric in METRICS:
        for value in rng.lognormal(np.log(scale), 0.4, size):
            sketch.add(sketches.setdefault(metric, {}), float(value))
    return packed.pack(sketch.triples(sketches))


def _table(*parts: bytes) -> dict[str, list]:
    merged = packed.Merged([("g", packed.unpack(part)) for part in parts])
    return {metric: merged.table(metric, packed.BOARD_FRACTIONS) for metric in METRICS}


def test_it_reads_every_quartile_through_a_near_sketch_as_through_the_whole_one():
    rng = np.random.default_rng(33)
    cut = 0
    for case in range(300):
        size = int(rng.integers(1, 1_500))
        days = int(rng.integers(1, 366))
        whole = _packed(rng, size, 400.0)
        margin = packed.margin_of(size, days)
        near = packed.near(whole, margin)
        # Today: up to `margin` values, some far outside the window's range (into the lumps).
        today = _packed(rng, int(rng.integers(0, margin + 1)), 400.0 * 3 ** rng.normal())
        assert _table(near, today) == _table(whole, today), (case, size, margin)
        cut += len(packed.unpack(near)) < len(packed.unpack(whole))
    assert cut > 200  # most sketches were really cut down
    year = _packed(rng, 1_095, 400.0)
    assert len(packed.unpack(packed.near(year, 8))) * 4 < len(packed.unpack(year))


@pytest.fixture
def late_year():
    with time_machine.travel(LATE, tick=False):
        seed_history(endpoints=3, days=400, workloads=4, slots=3, samples_per_run=1, now=LATE)
        materialized.drop()  # these boards merge the rollups (not the materialized figures)
        yield


def _board(query: dict[str, str]) -> list[dict]:
    return [dataclasses.asdict(row) for row in leaderboard(BoardFilters.from_query(query))]


@pytest.mark.django_db
def test_it_shows_the_same_long_board_from_near_sketches_as_from_whole_ones(late_year, monkeypatch):
    with CaptureQueriesContext(connection) as captured:
        boards = [_board(QUERIES[0])]
    boards += [_board(query) for query in QUERIES[1:]]
    # The 30-day board merged today into near sketches alone: no window row was read whole.
    assert any('"benchmarks_windowrollup"."near"' in q["sql"] for q in captured)
    assert not any('"benchmarks_windowrollup"."packed"' in q["sql"] for q in captured)
    assert all(any(row["ttft_p50_ms"] for row in board) for board in boards)
    # Today's values over every margin: each group is read whole instead, same figures.
    with monkeypatch.context() as patch:
        patch.setattr(packed, "margin_of", lambda runs, days: 0)
        assert [_board(query) for query in QUERIES] == boards
    WindowRollup.objects.update(near=None)  # as written before migration 0025: read whole
    assert [_board(query) for query in QUERIES] == boards


@pytest.mark.django_db
def test_it_fills_the_near_sketch_of_window_rows_written_before_it():
    migration = importlib.import_module("benchmarks.migrations.0025_windowrollup_near")
    with time_machine.travel(LATE, tick=False):
        seed_history(endpoints=1, days=40, workloads=4, slots=3, samples_per_run=1, now=LATE)
        windows.refresh(force=True)
    written = {w.id: bytes(w.near) for w in WindowRollup.objects.all()}
    assert written and all(written.values())
    WindowRollup.objects.update(near=None)
    migration.fill_near(None, SimpleNamespace(connection=connection))
    assert {w.id: bytes(w.near) for w in WindowRollup.objects.all()} == written
