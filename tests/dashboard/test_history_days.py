"""History charts over 90 days show one point per UTC day, read from the day rollups
(docs/design.md, "History charts over 90 days"); 90 days and shorter keep one point per run.
Over 90 days the summary, time-of-day profile, concurrency curve and context figures are
sketched from the window and day rollups, and errors by category are the rollups' counts."""

import json
import statistics
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import User

from benchmarks.models import Run, RunRollup
from benchmarks.rollups import sketch
from benchmarks.rollups.windows import refresh
from benchmarks.rollups.write import add_run, rebuild
from benchmarks.selectors import days
from benchmarks.selectors.history import compare_histories, endpoint_history
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)
DAYS = 40  # of history: longer than a 30-day window, inside a 90-day one
HOURS = (1, 9, 13, 21)  # slots of a day, in four time-of-day buckets
_CATEGORIES = {True: "server_error", False: "rate_limited"}
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
                errors = 5 if failed else hour % 2
                data.run(
                    ep, slot, wl=base, ttft_ms=ttft, decode_tps=80.0 + (day * hour) % 17,
                    ok=0 if failed else 5, errors=errors, throughput_tps=150.0 + day,
                    summary={"errors_by_category": {_CATEGORIES[failed]: errors}},
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


def _exact_and_sketched(monkeypatch, *, windows: bool) -> tuple[list, dict, dict]:
    """The first endpoint's year-long history sketched, and counting every run (the same
    history with the day-point switch moved past a year); windows: window rollups written."""
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        if windows:
            refresh(today=NOW.date())
        sketched = endpoint_history(eps[0], window_hours=8760)
        monkeypatch.setattr(days, "RUN_POINTS_UP_TO_HOURS", 10**6)
        exact = endpoint_history(eps[0], window_hours=8760)
        monkeypatch.undo()
    return eps, sketched, exact


def _assert_close(sketched, exact, path=""):
    """Counts equal; figures (floats) within the sketch's relative accuracy."""
    if isinstance(exact, dict):
        assert sketched.keys() == exact.keys(), path
        for key in exact:
            _assert_close(sketched[key], exact[key], f"{path}.{key}")
    elif isinstance(exact, list):
        assert len(sketched) == len(exact), path
        for number, (one, other) in enumerate(zip(sketched, exact, strict=True)):
            _assert_close(one, other, f"{path}[{number}]")
    elif isinstance(exact, float) and not path.endswith("error_rate"):
        assert sketched == pytest.approx(exact, rel=sketch.RELATIVE_ACCURACY), path
    else:
        assert sketched == exact, path


@pytest.mark.parametrize("windows", [False, True], ids=["day-rows", "window-rows"])
def test_a_long_window_sketches_its_figures_within_the_sketch_error(monkeypatch, windows):
    eps, sketched, exact = _exact_and_sketched(monkeypatch, windows=windows)
    assert (sketched["figures"], exact["figures"]) == ("sketched", "exact")
    assert (
        exact["summary"]["runs"]
        == Run.objects.filter(endpoint=eps[0], workload=data.workload("base")).count()
    )
    for part in ("summary", "tod_profile", "concurrency", "errors", "roofline"):
        _assert_close(sketched[part], exact[part], part)
    _assert_close(
        {k: v for k, v in sketched["context"].items() if k != "pairs"},
        {k: v for k, v in exact["context"].items() if k != "pairs"},
    )
    assert {e["category"] for e in sketched["errors"]} == set(_CATEGORIES.values())
    assert sketched["context"]["paired_slots"] > 0
    assert sketched["recent_runs"] == exact["recent_runs"]
    # Sketched, not counted run by run: the medians are the rollups' bins, not the runs'.
    bins = sketch.merged(
        r.sketches["ttft"]
        for r in RunRollup.objects.filter(
            span="day", endpoint=eps[0], workload=data.workload("base")
        )
    )
    assert sketched["summary"]["ttft_ms"]["p50"] == pytest.approx(
        sketch.quantiles(bins, [0.5])[0], rel=1e-12
    )
    assert sketched["summary"]["ttft_ms"]["p50"] != exact["summary"]["ttft_ms"]["p50"]


def test_a_long_window_shows_the_days_medians_as_its_context_pairs(monkeypatch):
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        by_day = endpoint_history(eps[0], window_hours=8760)
        long = endpoint_history(eps[0], workload="long-context", window_hours=8760)["runs"]
    long_days = {p["day"]: p["ttft_ms"] for p in long}
    pairs = by_day["context"]["pairs"]
    assert [p["base_ttft_ms"] for p in pairs] == [p["ttft_ms"] for p in by_day["runs"]]
    assert [p["long_ttft_ms"] for p in pairs] == [long_days[p["day"]] for p in by_day["runs"]]


def test_ninety_days_count_every_run_and_longer_windows_are_sketched():
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        refresh(today=NOW.date())
        ninety = endpoint_history(eps[0], window_hours=2160)
        longer = endpoint_history(eps[0], window_hours=2161)
        compared = compare_histories(eps, window_hours=2160)
        compared_longer = compare_histories(eps, window_hours=2161)
    ttfts = Run.objects.filter(endpoint=eps[0], workload=data.workload("base"), ok_count__gt=0)
    exact = statistics.median(ttfts.values_list("ttft_p50_ms", flat=True))
    assert (ninety["figures"], longer["figures"]) == ("exact", "sketched")
    assert ninety["summary"]["ttft_ms"]["p50"] == exact
    assert longer["summary"]["ttft_ms"]["p50"] != exact
    assert longer["summary"]["ttft_ms"]["p50"] == pytest.approx(exact, rel=sketch.RELATIVE_ACCURACY)
    assert [c["figures"] for c in compared] == ["exact", "exact"]
    assert [c["figures"] for c in compared_longer] == ["sketched", "sketched"]
    assert compared[0]["context"]["base_ttft_ms"] == ninety["context"]["base_ttft_ms"]
    assert compared_longer[0]["context"] == {
        k: v for k, v in longer["context"].items() if k != "pairs"
    }
    assert compared_longer[0]["concurrency"] == longer["concurrency"]


def test_a_run_that_lands_today_is_counted_over_a_long_window():
    """The window rollups end yesterday: today's runs come from today's day rows, and one
    that finishes after the window rows were written is counted at once."""
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        refresh(today=NOW.date())
        before = endpoint_history(eps[0], window_hours=8760)
        late = data.run(
            eps[0], NOW - timedelta(minutes=30), wl=data.workload("base"), ttft_ms=9_000.0,
            ok=2, errors=3, summary={"errors_by_category": {"timeout": 3}},
        )  # fmt: skip
        add_run(late.id)
        after = endpoint_history(eps[0], window_hours=8760)
    base_runs = Run.objects.filter(endpoint=eps[0], workload=data.workload("base"))
    today = base_runs.filter(slot__date=NOW.date()).exclude(id=late.id).count()
    assert after["figures"] == "sketched"
    assert today > 0 and before["summary"]["runs"] == base_runs.count() - 1
    assert after["summary"]["runs"] == before["summary"]["runs"] + 1
    assert after["summary"]["errors"] == before["summary"]["errors"] + 3
    assert {"category": "timeout", "count": 3} in after["errors"]
    late_bucket = after["tod_profile"][late.tod_bucket]
    assert late_bucket["runs"] == before["tod_profile"][late.tod_bucket]["runs"] + 1


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


def test_the_page_embeds_only_what_its_charts_draw(client):
    with time_machine.travel(NOW, tick=False):
        eps = _history()
        client.force_login(User.objects.create_user("ana"))
        api = client.get(f"/api/v1/endpoints/{eps[0].slug}/history/", {"window": "365d"})
        page = client.get(f"/endpoints/{eps[0].slug}/", {"window": "365d"}).content.decode()
    embedded = page.split('<script id="history-data" type="application/json">')[1]
    embedded = embedded.split("</script>")[0]
    charts, history = json.loads(embedded), api.json()
    assert charts["runs"] == [
        {key: point[key] for key in ("slot", "id", "ttft_ms", "decode_tps")}
        for point in history["runs"]
    ]
    assert len(charts["runs"]) == DAYS
    for part in ("bands", "tod_profile", "context", "concurrency", "roofline"):
        assert charts[part] == history[part], part
    assert "recent_runs" not in charts and "summary" not in charts
    assert len(embedded) < len(api.content) * 0.6
