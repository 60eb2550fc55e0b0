"""Dashboard selectors: leaderboard medians, spreads, ties, prefill cost, prices, agent loop."""

import sqlite3
from datetime import timedelta
from statistics import median

import numpy as np
import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.http import QueryDict
from django.utils import timezone

from benchmarks.models import Vantage
from benchmarks.money import Prices, request_cost
from benchmarks.selectors.agent_loop import project, verdict
from benchmarks.selectors.aggregates import (
    SQLITE_FUNCTION,
    SQLITE_QUARTILES,
    Quartiles,
    register_sqlite,
)
from benchmarks.selectors.history import endpoint_history
from benchmarks.selectors.leaderboard import BoardFilters, leaderboard
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def defaults():
    """The default workloads and vantage that migration 0002 installs."""
    data.default_workloads()
    data.vantage()


def q(value: str) -> BoardFilters:
    return BoardFilters.from_query(QueryDict(value))


def by_slug(rows):
    return {row.slug: row for row in rows}


def quartiles(values):
    return tuple(float(np.percentile(values, p)) for p in (25, 50, 75))


def test_it_ranks_by_median_decode_and_shows_the_spread():
    fast = data.endpoint(data.provider("wafer"), "wafer-70b")
    slow = data.endpoint(data.provider("gpu"), "gpu-70b")
    fast_tps, slow_tps = [700, 760, 740, 810, 720], [60, 75, 70, 66, 72]
    ttfts = [200, 240, 220, 260, 210]
    data.series(fast, ttft_ms=ttfts, decode_tps=fast_tps)
    data.series(slow, ttft_ms=[t * 3 for t in ttfts], decode_tps=slow_tps)

    rows = leaderboard(BoardFilters())

    assert [row.slug for row in rows] == ["wafer-70b", "gpu-70b"]
    wafer = rows[0]
    assert (wafer.decode_tps_p25, wafer.decode_tps_p50, wafer.decode_tps_p75) == pytest.approx(
        quartiles(fast_tps)
    )
    assert wafer.ttft_p50_ms == pytest.approx(median(ttfts))
    e2e = [t + 2000 / d * 1000 for t, d in zip(ttfts, fast_tps, strict=True)]
    assert wafer.e2e_p50_ms == pytest.approx(float(np.percentile(e2e, 50)))
    assert (wafer.rank, wafer.tie, rows[1].rank, rows[1].tie) == (1, False, 2, False)
    assert wafer.runs == 5 and wafer.samples == 25

    by_ttft = leaderboard(q("sort=-ttft"))  # worst TTFT first
    assert [row.slug for row in by_ttft] == ["gpu-70b", "wafer-70b"]


def test_it_marks_rows_whose_intervals_overlap_as_ties():
    a = data.endpoint(data.provider("a"), "a")
    b = data.endpoint(data.provider("b"), "b")
    c = data.endpoint(data.provider("c"), "c")
    data.series(a, ttft_ms=[300] * 4, decode_tps=[100, 110, 120, 130])
    data.series(b, ttft_ms=[300] * 4, decode_tps=[95, 105, 112, 118])  # overlaps a
    data.series(c, ttft_ms=[300] * 4, decode_tps=[40, 42, 44, 46])  # clearly slower

    rows = leaderboard(BoardFilters())

    assert [(r.slug, r.rank, r.tie) for r in rows] == [
        ("a", 1, False),
        ("b", 1, True),
        ("c", 3, False),
    ]


def test_it_computes_prefill_cost_from_runs_in_the_same_slots():
    ep = data.endpoint(data.provider("p"), "p")
    slots = data.recent_slots(5)
    base = [400, 420, 410, 430, 405]
    long = [2400, 2600, 2500, 2300]  # the newest slot has no long-context run
    data.series(ep, ttft_ms=base, decode_tps=[90] * 5, slots=slots)
    data.series(
        ep, ttft_ms=long, decode_tps=[80] * 4, slots=slots[:4], wl=data.workload("long-context")
    )
    # A long-context run in a slot without a base run must not be paired with anything.
    data.run(ep, slots[0] - timedelta(hours=1), wl=data.workload("long-context"), ttft_ms=99_000)

    row = leaderboard(BoardFilters())[0]

    deltas = [lo - b for lo, b in zip(long, base, strict=False)]
    assert row.prefill_cost_ms == pytest.approx(median(deltas))
    assert row.prefill_context_tokens == data.workload("long-context").context_tokens
    assert endpoint_history(ep)["context"]["prefill_cost_ms"] == pytest.approx(median(deltas))


def test_it_prices_one_standard_request_from_measured_tokens():
    priced = data.endpoint(data.provider("p"), "priced", price_in=3.0, price_out=15.0)
    unpriced = data.endpoint(data.provider("u"), "unpriced", price_in=None, price_out=None)
    data.series(
        priced, ttft_ms=[500] * 3, decode_tps=[50] * 3, input_tokens=120, output_tokens=1900
    )
    data.series(unpriced, ttft_ms=[500] * 3, decode_tps=[50] * 3)

    rows = by_slug(leaderboard(BoardFilters()))

    expected = request_cost(Prices.listed(3.0, 15.0), input_tokens=120, output_tokens=1900)
    assert float(expected) == pytest.approx((120 * 3.0 + 1900 * 15.0) / 1e6)
    assert rows["priced"].cost_per_request_usd == pytest.approx(float(expected))
    assert rows["unpriced"].cost_per_request_usd is None


def test_it_reports_per_user_decode_by_concurrency_and_aggregate_throughput_apart():
    ep = data.endpoint(data.provider("p"), "p", peak_concurrency=32)
    data.series(ep, ttft_ms=[300] * 3, decode_tps=[100, 104, 102])
    data.series(
        ep,
        ttft_ms=[600] * 3,
        decode_tps=[60, 62, 64],
        wl=data.workload("parallel-10"),
        throughput_tps=600,
    )
    data.series(
        ep, ttft_ms=[900] * 3, decode_tps=[20, 22, 21], wl=data.workload("peak"), throughput_tps=660
    )

    row = leaderboard(BoardFilters())[0]

    assert row.decode_tps_c1 == pytest.approx(102)
    assert row.decode_tps_c10 == pytest.approx(62)
    assert row.decode_tps_peak == pytest.approx(21)
    assert (row.throughput_tps, row.throughput_concurrency) == (pytest.approx(660), 32)
    assert row.decode_tps_p50 == pytest.approx(102)  # the main column stays per-user at 1

    at_ten = leaderboard(q("concurrency=10"))[0]
    assert at_ten.decode_tps_p50 == pytest.approx(62) and at_ten.runs == 3


@time_machine.travel("2026-06-10 09:30:00+00:00", tick=False)  # "an hour ago" is outside 12–18 h
def test_it_counts_only_runs_in_the_window_time_of_day_and_vantage():
    ep = data.endpoint(data.provider("p"), "p")
    now = timezone.now()
    old = now - timedelta(days=5)
    data.run(ep, now - timedelta(hours=1), decode_tps=100)
    data.run(ep, old.replace(hour=2), decode_tps=50)
    data.run(ep, old.replace(hour=14), decode_tps=10)
    elsewhere = Vantage.objects.create(slug="eu-west", label="EU west", queue="eu-west")
    data.run(ep, now - timedelta(hours=2), van=elsewhere, decode_tps=1)

    assert leaderboard(BoardFilters())[0].runs == 1
    week = leaderboard(q("window=7d"))[0]
    assert week.runs == 3 and week.decode_tps_p50 == pytest.approx(50)
    afternoon = leaderboard(q("window=7d&tod=2"))[0]
    assert afternoon.runs == 1 and afternoon.decode_tps_p50 == pytest.approx(10)
    assert leaderboard(q("vantage=eu-west"))[0].decode_tps_p50 == pytest.approx(1)


def test_it_counts_errors_and_flags_failing_endpoints():
    ep = data.endpoint(data.provider("p"), "p")
    slots = data.recent_slots(3)
    data.run(ep, slots[0], ok=5, errors=0)
    data.run(ep, slots[1], ok=3, errors=2)
    data.run(ep, slots[2], ok=0, errors=5)

    row = leaderboard(BoardFilters())[0]

    assert row.error_rate == pytest.approx(7 / 15)
    assert row.status == "failing" and row.last_run_status == "failed"
    assert row.last_run_at == slots[2]


def test_it_lists_enabled_endpoints_without_runs_last_and_hides_disabled_ones():
    measured = data.endpoint(data.provider("m"), "measured")
    data.series(measured, ttft_ms=[300], decode_tps=[80])
    data.endpoint(data.provider("n"), "new-one")
    data.endpoint(data.provider("d"), "disabled-one", enabled=False)
    data.endpoint(data.provider("s", simulated=True), "simulated-one")

    rows = leaderboard(BoardFilters())

    assert [r.slug for r in rows] == ["measured", "new-one", "simulated-one"]
    assert rows[1].status == "no runs yet" and rows[1].rank is None
    assert rows[2].simulated and not rows[0].simulated


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("window=5d", "window"),
        ("tod=7", "tod"),
        ("concurrency=-1", "concurrency"),
        ("concurrency=lots", "concurrency"),
        ("sort=price_of_tea", "sort"),
        ("workload=nope", "workload"),
        ("vantage=mars", "vantage"),
    ],
)
def test_it_rejects_bad_filters_naming_the_field(query, field):
    with pytest.raises(ValidationError) as caught:
        q(query)
    assert list(caught.value.message_dict) == [field]
    assert field in caught.value.message_dict[field][0]


def test_it_projects_agent_loop_wall_time_from_measured_medians():
    quick = data.endpoint(data.provider("q"), "quick")
    slow = data.endpoint(data.provider("s"), "slow")
    data.series(quick, ttft_ms=[200, 210, 190], decode_tps=[900, 1000, 800])
    data.series(slow, ttft_ms=[700, 800, 600], decode_tps=[40, 50, 60])
    rows = leaderboard(BoardFilters())

    calls, tokens, tool = 20, 800, 0.5
    result = project(rows, calls=calls, tokens_per_call=tokens, tool_s=tool)

    assert [p["slug"] for p in result] == ["quick", "slow"]
    for p, row in zip(result, sorted(rows, key=lambda r: r.slug), strict=True):
        expected = calls * (row.ttft_p50_ms / 1000 + tokens / row.decode_tps_p50) + calls * tool
        assert p["wall_s"] == pytest.approx(expected)
        assert p["wall_best_s"] <= p["wall_s"] <= p["wall_worst_s"]
        assert p["verdict"] == verdict(expected)
    one_call = project(rows, calls=1, tokens_per_call=100, tool_s=0)
    assert one_call[0]["verdict"] == "immediate"  # 0.2 s + 100/900 s
    assert result[1]["verdict"] == "background job"
    with pytest.raises(ValueError):
        project(rows, calls=0, tokens_per_call=800, tool_s=0)


def test_it_builds_an_endpoint_history_from_run_rows():
    ep = data.endpoint(
        data.provider("p"),
        "p",
        active_params_b=70,
        bytes_per_param=2,
        chips=1,
        chip_bandwidth_tbps=3.35,
    )
    slots = data.recent_slots(6)
    ttft = [500, 520, 900, 510, 530, 950]  # slower in the 18:00 slots
    decode = [20, 21, 12, 22, 19, 11]
    data.series(
        ep,
        ttft_ms=ttft,
        decode_tps=decode,
        slots=slots,
        summary={"errors_by_category": {"timeout": 1}, "ttft_ms": {"p10": 1, "p90": 2}},
    )
    data.run(
        ep,
        slots[-1],
        wl=data.workload("parallel-10"),
        decode_tps=9,
        throughput_tps=90,
        ok=4,
        errors=1,
        summary={"errors_by_category": {"rate_limited": 2}},
    )

    history = endpoint_history(ep, window_hours=168)

    assert [p["ttft_ms"] for p in history["runs"]] == ttft
    assert history["summary"]["ttft_ms"]["p50"] == pytest.approx(median(ttft))
    evening = next(b for b in history["tod_profile"] if b["bucket"] == 3)
    expected = median(t for s, t in zip(slots, ttft, strict=True) if s.hour == 18)
    assert evening["ttft_ms"]["p50"] == pytest.approx(expected)
    curve = {c["concurrency"]: c for c in history["concurrency"]}
    assert curve[1]["decode_tps_per_user"] == pytest.approx(median(decode))
    assert curve[10]["decode_tps_per_user"] == pytest.approx(9)
    assert curve[10]["throughput_tps"] == pytest.approx(90)
    assert history["errors"] == [{"category": "rate_limited", "count": 2}]
    assert history["bands"]["ttft"][0] == {"low": 1.0, "high": 2.0}
    ceiling = 3.35e12 / (70e9 * 2)
    assert history["roofline"]["ceiling_tps"] == pytest.approx(ceiling)
    assert history["roofline"]["efficiency"] == pytest.approx(median(decode) / ceiling)
    assert history["recent_runs"][0]["workload"] in ("parallel-10", "base")


def test_it_computes_percentiles_like_numpy_on_sqlite():
    values = [5.0, 1.0, 9.5, 3.25, 7.0, 2.0]
    connection = sqlite3.connect(":memory:")
    register_sqlite(connection)
    connection.execute("create table t (x real)")
    connection.executemany("insert into t values (?)", [(v,) for v in [*values, None]])
    for fraction in (0.0, 0.25, 0.5, 0.9, 1.0):
        (got,) = connection.execute(
            f"select {SQLITE_FUNCTION}(x, ?) from t",  # noqa: S608 - our constant name
            (fraction,),
        ).fetchone()
        assert got == pytest.approx(float(np.percentile(values, fraction * 100)))
    (text,) = connection.execute(f"select {SQLITE_QUARTILES}(x) from t").fetchone()  # noqa: S608
    assert Quartiles.split(text) == pytest.approx(tuple(np.percentile(values, [25, 50, 75])))
    (empty,) = connection.execute(f"select {SQLITE_QUARTILES}(x) from t where x > 99").fetchone()  # noqa: S608
    assert Quartiles.split(empty) == (None, None, None)
