"""History charts over 90 days show one point per UTC day, read from the day rollups
(docs/design.md, "History charts over 90 days"); 90 days and shorter keep one point per run,
and the summary, time-of-day profile, context figures and roofline still count every run."""

import statistics
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import User

from benchmarks.models import Run, RunRollup
from benchmarks.rollups import sketch
from benchmarks.rollups.write import rebuild
from benchmarks.selectors import days
from benchmarks.selectors.history import compare_histories, endpoint_history
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)
DAYS = 40  # of history: longer than a 30-day window, inside a 90-day one
HOURS = (1, 9, 13, 21)  # slots of a day, in four time-of-day buckets
ROOFLINE = {"chips": 8, "chip_bandwidth_tbps": 3.35, "active_params_b": 70, "bytes_per_param": 2}


def _history() -> list:
    """Two endpoints with DAYS days of base and long-context runs (some failed, some with
    errors, figures varying by day and hour), and their rollups rebuilt from the runs."""
    data.default_workloads()
    data.vantage()
    base, long = data.workload("base"), data.workload("long-context")
    eps = [data.endpoint(data.provider(name), name, **ROOFLINE) for name in ("a", "b")]
    start = datetime(NOW.year, NOW.month, NOW.day, tzinfo=UTC) - timedelta(days=DAYS - 1)
    for number, ep in enumerate(eps):
        for day in range(DAYS):
            for hour in HOURS:
                slot = start + timedelta(days=day, hours=hour)
                if slot > NOW:
                    continue
                ttft = 400.0 + 7 * day + 31 * hour % 50 + 100 * number
                failed = (day * 7 + hour) % 23 == 0
                data.run(
                    ep, slot, wl=base, ttft_ms=ttft, decode_tps=80.0 + (day * hour) % 17,
                    ok=0 if failed else 5, errors=5 if failed else hour % 2,
                    throughput_tps=150.0 + day,
                )  # fmt: skip
                data.run(ep, slot, wl=long, ttft_ms=ttft * 2.5 + hour, decode_tps=70.0)
    rebuild()
    return eps


def _expected_day(ep, workload, day) -> dict:
    """What the day's rollup rows say, read through their JSON sketches."""
    rows = RunRollup.objects.filter(span="day", endpoint=ep, workload=workload, day=day)
    figures = {"runs": sum(r.runs for r in rows), "ok": sum(r.ok_count for r in rows)}
    figures["errors"] = sum(r.error_count for r in rows)
    for metric in ("ttft", "decode", "e2e", "throughput"):
        bins = sketch.merged(r.sketches.get(metric, {}) for r in rows)
        figures[metric] = sketch.quantiles(bins, days.DAY_FRACTIONS)
    return figures


def test_a_long_window_shows_each_day_as_its_rollups_say():
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        history = endpoint_history(eps[0], window_hours=8760)
        base = data.workload("base")
    assert history["points"] == "day"
    ran_days = sorted({r.slot.date() for r in Run.objects.filter(endpoint=eps[0], workload=base)})
    assert [p["day"] for p in history["runs"]] == [d.isoformat() for d in ran_days]
    assert len(ran_days) == DAYS
    for number, point in enumerate(history["runs"]):
        day = ran_days[number]
        want = _expected_day(eps[0], base, day)
        assert point["slot"] == datetime(day.year, day.month, day.day, tzinfo=UTC).isoformat()
        assert point["id"] is None  # a day has no run page to open
        assert (point["runs"], point["ok"], point["errors"]) == (
            want["runs"], want["ok"], want["errors"],
        )  # fmt: skip
        assert point["ttft_ms"] == pytest.approx(want["ttft"][1], rel=1e-12)
        assert point["decode_tps"] == pytest.approx(want["decode"][1], rel=1e-12)
        assert point["e2e_ms"] == pytest.approx(want["e2e"][1], rel=1e-12)
        assert point["throughput_tps"] == pytest.approx(want["throughput"][1], rel=1e-12)
        low, _, high = want["ttft"]
        band = history["bands"]["ttft"][number]
        assert band == {
            "low": pytest.approx(low, rel=1e-12),
            "high": pytest.approx(high, rel=1e-12),
        }
        # …and the sketch is within its accuracy of the day's exact median of run medians.
        exact = statistics.median(
            r.ttft_p50_ms
            for r in Run.objects.filter(endpoint=eps[0], workload=base, slot__date=day)
            if r.ttft_p50_ms is not None
        )
        assert point["ttft_ms"] == pytest.approx(exact, rel=sketch.RELATIVE_ACCURACY)


def test_a_long_window_still_counts_every_run_in_its_figures(monkeypatch):
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        by_day = endpoint_history(eps[0], window_hours=8760)
        long = endpoint_history(eps[0], workload="long-context", window_hours=8760)["runs"]
        monkeypatch.setattr(days, "RUN_POINTS_UP_TO_HOURS", 10**6)
        by_run = endpoint_history(eps[0], window_hours=8760)
    assert by_run["points"] == "run" and len(by_run["runs"]) > len(by_day["runs"])
    for part in ("summary", "tod_profile", "concurrency", "errors", "recent_runs", "roofline"):
        assert by_day[part] == by_run[part], part
    assert by_day["roofline"]["measured_tps"] is not None
    day_context = {k: v for k, v in by_day["context"].items() if k != "pairs"}
    run_context = {k: v for k, v in by_run["context"].items() if k != "pairs"}
    assert day_context == run_context
    # The context chart: each day's base and long-context medians, as the day points say.
    long_days = {p["day"]: p["ttft_ms"] for p in long}
    pairs = by_day["context"]["pairs"]
    assert [p["base_ttft_ms"] for p in pairs] == [p["ttft_ms"] for p in by_day["runs"]]
    assert [p["long_ttft_ms"] for p in pairs] == [long_days[p["day"]] for p in by_day["runs"]]


def test_thirty_days_and_shorter_keep_one_point_per_run():
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        for hours in (72, 168, 720, 2160):
            history = endpoint_history(eps[0], window_hours=hours)
            runs = Run.objects.filter(
                endpoint=eps[0],
                workload=data.workload("base"),
                slot__gte=NOW - timedelta(hours=hours),
                status__in=Run.FINISHED,
            )
            assert history["points"] == "run"
            ids = [p["id"] for p in history["runs"]]
            assert sorted(ids) == sorted(runs.values_list("id", flat=True))
    assert days.per_day(2160) is False and days.per_day(8760) is True


def test_compare_shows_the_same_day_points_and_profiles():
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        compared = compare_histories(eps, window_hours=8760)
        alone = [endpoint_history(ep, window_hours=8760) for ep in eps]
        short = compare_histories(eps, window_hours=2160)
    for each, history in zip(compared, alone, strict=True):
        assert each["points"] == "day"
        assert each["runs"] == [
            {k: p[k] for k in ("slot", "ttft_ms", "decode_tps")} for p in history["runs"]
        ]
        assert each["tod_profile"] == history["tod_profile"]
    assert compared[0]["runs"] != compared[1]["runs"]
    assert all(each["points"] == "run" for each in short)


def test_the_api_and_the_page_say_the_points_are_per_day(client):
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        client.force_login(User.objects.create_user("ana"))
        api = client.get(f"/api/v1/endpoints/{eps[0].slug}/history/", {"window": "365d"})
        short = client.get(f"/api/v1/endpoints/{eps[0].slug}/history/", {"window": "90d"})
        page = client.get(f"/endpoints/{eps[0].slug}/", {"window": "365d"}).content.decode()
        short_page = client.get(f"/endpoints/{eps[0].slug}/").content.decode()
        compare = client.get("/compare/", {"e": [ep.slug for ep in eps], "window": "365d"})
    assert api.status_code == 200 and api.json()["points"] == "day"
    assert len(api.json()["runs"]) == DAYS
    assert short.json()["points"] == "run"
    assert "TTFT per day" in page and "TTFT per run" not in page
    assert "TTFT per run" in short_page
    assert "TTFT per day" in compare.content.decode()
