"""History chart points over long windows: one per UTC day, read from the day rollups.

docs/design.md ("History charts over 30 days"): a day's point is the median of its runs'
medians, with their p10–p90 as its band, from the day's rollup rows of that endpoint and
workload (every concurrency and time-of-day bucket merged; sketched, rollups.sketch). A year is
365 points per series instead of 1,095 runs, and no run summary is read.
"""

from datetime import UTC, date, datetime, time
from typing import Any

import numpy as np
from django.utils import timezone

from ..models import RunRollup, Vantage
from ..rollups import packed, sketch
from .scope import since

# Windows longer than this show day points (30 d and shorter: one point per run).
RUN_POINTS_UP_TO_HOURS = 30 * 24
# A day point's band and middle: p10, median and p90 of the day's run medians.
DAY_FRACTIONS = (0.1, 0.5, 0.9)
# Chart metric (rollup sketch name) -> the point's key, as run_point names it.
POINT_METRICS = {
    "ttft": "ttft_ms",
    "decode": "decode_tps",
    "e2e": "e2e_ms",
    "throughput": "throughput_tps",
}

Key = tuple[int, int]  # (endpoint id, workload id)


def per_day(window_hours: int) -> bool:
    """Whether a window's history charts show day points rather than run points."""
    return window_hours > RUN_POINTS_UP_TO_HOURS


def points_kind(window_hours: int) -> str:
    """The API's "points" field: "day" or "run"."""
    return "day" if per_day(window_hours) else "run"


def day_series(
    endpoint_ids: list[int],
    workload_ids: list[int],
    *,
    vantage: Vantage | None,
    window_hours: int,
    now: datetime | None = None,
) -> dict[Key, list[dict[str, Any]]]:
    """Each (endpoint, workload)'s day points over the window's UTC days (the day `window_hours`
    ago to today), oldest first; a day without a finished run has no point. Each point has
    run_point's keys (no id, status, bucket or concurrency: a day has none of one run's) plus
    "day", "runs" and "bands" ({metric: {"low", "high"} or None} for "ttft" and "decode")."""
    series: dict[Key, list[dict[str, Any]]] = {
        (e, w): [] for e in endpoint_ids for w in workload_ids
    }
    if vantage is None or not endpoint_ids or not workload_ids:
        return series
    now = now or timezone.now()
    parts, totals = _day_parts(endpoint_ids, workload_ids, vantage, window_hours, now)
    merged = packed.Merged(parts, metrics=POINT_METRICS)
    tables = {m: merged.table(m, DAY_FRACTIONS) for m in POINT_METRICS}
    for number, group in enumerate(merged.groups):
        endpoint_id, workload_id, day = group
        runs, ok, errors = totals[group]
        point: dict[str, Any] = {
            "id": None,
            "slot": datetime.combine(day, time(), tzinfo=UTC).isoformat(),
            "day": day.isoformat(),
            "status": None,
            "tod_bucket": None,
            "concurrency": None,
            "runs": runs,
            "ok": ok,
            "errors": errors,
        }
        for metric, key in POINT_METRICS.items():
            point[key] = tables[metric][number][1]
        point["bands"] = {m: _band(tables[m][number]) for m in ("ttft", "decode")}
        series[(endpoint_id, workload_id)].append(point)
    for points in series.values():
        points.sort(key=lambda p: p["day"])
    return series


def _band(values: list[float | None]) -> dict[str, float] | None:
    low, _, high = values
    return None if low is None or high is None else {"low": low, "high": high}


def _day_parts(
    endpoint_ids: list[int],
    workload_ids: list[int],
    vantage: Vantage,
    window_hours: int,
    now: datetime,
) -> tuple[list[tuple[Any, np.ndarray]], dict[tuple[int, int, date], list[int]]]:
    """The window's day rollup rows as (group, packed triples) and each group's (runs, ok,
    errors); a row not packed yet (before migration 0023) is read from its JSON sketches."""
    first = since(window_hours, now=now).date()
    rows = RunRollup.objects.filter(
        span="day",
        vantage=vantage,
        endpoint_id__in=endpoint_ids,
        workload_id__in=workload_ids,
        day__gte=first,
        day__lte=now.date(),
    ).values_list(
        "id", "endpoint_id", "workload_id", "day", "runs", "ok_count", "error_count", "packed"
    )
    parts: list[tuple[Any, np.ndarray]] = []
    totals: dict[tuple[int, int, date], list[int]] = {}
    unpacked: dict[int, tuple] = {}
    for row_id, endpoint_id, workload_id, day, runs, ok, errors, data in rows:
        group = (endpoint_id, workload_id, day)
        total = totals.setdefault(group, [0, 0, 0])
        total[0] += runs
        total[1] += ok
        total[2] += errors
        if data is None:
            unpacked[row_id] = group
        else:
            parts.append((group, packed.unpack(data)))
    if unpacked:
        for row_id, sketches in RunRollup.objects.filter(id__in=unpacked).values_list(
            "id", "sketches"
        ):
            bins = np.array(sketch.triples(sketches), dtype=np.int32).reshape(-1, 3)
            parts.append((unpacked[row_id], bins))
    return parts, totals
