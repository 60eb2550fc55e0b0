"""An endpoint's history reads each run's band scalars from one decompressed summary: the same
points and bands as reading each scalar through the ORM, whatever the summary holds."""

from datetime import UTC, datetime

import pytest
import time_machine

from benchmarks.models import Run
from benchmarks.selectors import runs as runs_module
from benchmarks.selectors.history import compare_histories, endpoint_history
from benchmarks.selectors.runs import RUN_POINT_FIELDS, point_rows, run_band, run_point
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)
# What a summary's band scalars may hold: numbers, ints, a bool, text, null, a nested object,
# a metric that is not an object, or nothing at all.
SUMMARIES = [
    {"ttft_ms": {"p10": 101.5, "p90": 180.25}, "decode_tps": {"p10": 40, "p90": 61.0}},
    {"ttft_ms": {"p10": 1e-7, "p90": 3.0e5}, "decode_tps": {"p10": True, "p90": "fast"}},
    {"ttft_ms": {"p10": None, "p90": {"x": 1}}, "decode_tps": [1, 2]},
    {"ttft_ms": 12.0, "errors_by_category": {"timeout": 2}},
    {},
]


def test_it_reads_the_same_points_and_bands_as_through_the_orm():
    with time_machine.travel(NOW, tick=False):
        data.default_workloads()
        data.vantage()
        ep = data.endpoint(data.provider("p"), "p")
        slots = data.recent_slots(len(SUMMARIES) * 2, now=NOW)
        for number, slot in enumerate(slots):
            summary = SUMMARIES[number % len(SUMMARIES)]
            data.run(ep, slot, ttft_ms=500.0 + number, decode_tps=90.0 - number, summary=summary)
        runs = Run.objects.filter(endpoint=ep).order_by("slot")
        fields = [f for f in RUN_POINT_FIELDS if f != "summary"]
        fast, plain = point_rows(runs), runs_module._point_rows_plain(runs, fields)
        assert [run_point(r) for r in fast] == [run_point(r) for r in plain]
        for metric in ("ttft", "decode"):
            assert [run_band(r, metric) for r in fast] == [run_band(r, metric) for r in plain]
        history = endpoint_history(ep, window_hours=168)
    bands = history["bands"]
    assert bands["ttft"][:5] == [
        {"low": 101.5, "high": 180.25}, {"low": 1e-7, "high": 3.0e5}, None, None, None,
    ]  # fmt: skip
    assert bands["decode"][:2] == [{"low": 40.0, "high": 61.0}, None]
    assert [p["ttft_ms"] for p in history["runs"]] == [500.0 + n for n in range(len(slots))]


def test_it_writes_each_slot_as_python_writes_it():
    with time_machine.travel(NOW, tick=False):
        data.default_workloads()
        data.vantage()
        eps = [data.endpoint(data.provider(name), name) for name in ("a", "b")]
        slots = data.recent_slots(4, now=NOW)
        slots[1] = slots[1].replace(microsecond=250_000)  # a slot off the whole second
        slots[2] = slots[2].replace(microsecond=7)
        for ep in eps:
            for slot in slots:
                data.run(ep, slot)
                data.run(ep, slot, wl=data.workload("long-context"), ttft_ms=900.0)
        history = endpoint_history(eps[0], window_hours=168)
        compared = compare_histories(eps, window_hours=168)
    want = [slot.isoformat() for slot in slots]
    assert want[1].endswith(".250000+00:00") and want[2].endswith(".000007+00:00")
    assert [p["slot"] for p in history["runs"]] == want
    assert [p["slot"] for p in history["context"]["pairs"]] == want
    assert history["context"]["prefill_cost_ms"] == 400.0
    for each in compared:
        assert [p["slot"] for p in each["runs"]] == want
