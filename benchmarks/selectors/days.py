"""History chart points over long windows: one per UTC day, read from the day rollups.

docs/design.md ("History charts over 90 days"): a day's point is the median of its runs'
medians, with their p10–p90 as its band, from the day's rollup rows of that endpoint and
workload (every concurrency and time-of-day bucket merged; sketched, rollups.sketch). A year is
365 points per series instead of 1,095 runs, and no run summary is read.
"""

from datetime import date, datetime
from typing import Any

import numpy as np
from django.db import connections
from django.db.models import F, QuerySet, Sum
from django.utils import timezone

from ..models import RunRollup, Vantage
from ..rollups import packed, sketch
from .scope import since

# Windows longer than this show day points (90 d and shorter: one point per run).
RUN_POINTS_UP_TO_HOURS = 90 * 24
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


def figures_kind(window_hours: int) -> str:
    """The API's "figures" field: "sketched" (summary, profile, concurrency and context from
    the rollups, selectors.sketched) or "exact" (every run counted)."""
    return "sketched" if per_day(window_hours) else "exact"


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
    "day", "runs", "saturated_runs" (of those runs, the ones whose client was saturated:
    docs/design.md §4) and "bands" ({metric: {"low", "high"} or None} for "ttft" and "decode")."""
    series: dict[Key, list[dict[str, Any]]] = {
        (e, w): [] for e in endpoint_ids for w in workload_ids
    }
    if vantage is None or not endpoint_ids or not workload_ids:
        return series
    now = now or timezone.now()
    first = since(window_hours, now=now).date()
    merged, totals = _day_merged(
        endpoint_ids, workload_ids, vantage, (first, now.date()), metrics=tuple(POINT_METRICS)
    )
    saturated = _saturated_runs(endpoint_ids, workload_ids, vantage, (first, now.date()))
    columns = {m: merged.columns(m, DAY_FRACTIONS) for m in POINT_METRICS}
    ttft_low, ttft, ttft_high = columns["ttft"]
    decode_low, decode, decode_high = columns["decode"]
    rows = zip(
        merged.groups, ttft, decode, columns["e2e"][1], columns["throughput"][1],
        ttft_low, ttft_high, decode_low, decode_high, strict=True,
    )  # fmt: skip
    for group, *figures in rows:
        endpoint_id, workload_id, day = group
        runs, ok, errors = totals[group]
        text = day.isoformat()
        series[(endpoint_id, workload_id)].append(
            {
                "id": None,
                "slot": f"{text}T00:00:00+00:00",
                "day": text,
                "status": None,
                "tod_bucket": None,
                "concurrency": None,
                "runs": runs,
                "saturated_runs": saturated.get(group, 0),
                "ok": ok,
                "errors": errors,
                "ttft_ms": figures[0],
                "decode_tps": figures[1],
                "e2e_ms": figures[2],
                "throughput_tps": figures[3],
                "bands": {"ttft": _band(*figures[4:6]), "decode": _band(*figures[6:8])},
            }
        )
    return series


def day_medians(
    endpoint_ids: list[int], workload_id: int, *, vantage: Vantage | None, window_hours: int
) -> dict[int, list[dict[str, Any]]]:
    """What the compare page charts of day_series: each endpoint's (slot, TTFT, decode) day
    points of one workload (the same values; no band, count or other metric is merged)."""
    series: dict[int, list[dict[str, Any]]] = {e: [] for e in endpoint_ids}
    if vantage is None or not endpoint_ids:
        return series
    now = timezone.now()
    first = since(window_hours, now=now).date()
    merged, _ = _day_merged(
        endpoint_ids, [workload_id], vantage, (first, now.date()), metrics=("ttft", "decode")
    )
    (ttft,) = merged.columns("ttft", (0.5,))
    (decode,) = merged.columns("decode", (0.5,))
    for (endpoint_id, _, day), ttft_ms, decode_tps in zip(merged.groups, ttft, decode, strict=True):
        slot = f"{day.isoformat()}T00:00:00+00:00"
        series[endpoint_id].append({"slot": slot, "ttft_ms": ttft_ms, "decode_tps": decode_tps})
    return series


def _band(low: float | None, high: float | None) -> dict[str, float] | None:
    return None if low is None or high is None else {"low": low, "high": high}


def _day_merged(
    endpoint_ids: list[int],
    workload_ids: list[int],
    vantage: Vantage,
    days: tuple[date, date],
    *,
    metrics: tuple[str, ...],
) -> tuple[packed.Merged, dict[tuple[int, int, date], tuple[int, int, int]]]:
    """The day rollup rows of the days (first, last) merged per (endpoint, workload, day)
    group, groups in that order, and each group's (runs, ok, errors); a row not packed yet
    (before migration 0023) is read from its JSON sketches."""
    rows = _day_rows(endpoint_ids, workload_ids, vantage, days)
    if connections[rows.db].vendor == "postgresql":
        grouped = _grouped_in_sql(rows)
    else:
        grouped = _grouped(rows)
    totals: dict[tuple[int, int, date], tuple[int, int, int]] = {}
    blobs = []
    for endpoint_id, workload_id, day, runs, ok, errors, data, *_ in grouped:
        totals[(endpoint_id, workload_id, day)] = (runs, ok, errors)
        blobs.append(bytes(data or b""))
    # One array for every group (a view each): unpacking each group alone cost more.
    triples = packed.unpack(b"".join(blobs))
    lengths = [len(blob) // 12 for blob in blobs]
    if not any(len(row) > 7 and row[7] for row in grouped):
        return packed.Merged.of_groups(list(totals), triples, lengths, metrics), totals
    ends = np.cumsum(lengths).tolist()
    parts: list[tuple[Any, np.ndarray]] = [
        (group, triples[end - length : end])
        for group, length, end in zip(totals, lengths, ends, strict=True)
    ]
    unpacked = rows.filter(packed__isnull=True).values_list(
        "endpoint_id", "workload_id", "day", "sketches"
    )
    for endpoint_id, workload_id, day, sketches in unpacked:
        bins = np.array(sketch.triples(sketches), dtype=np.int32).reshape(-1, 3)
        parts.append(((endpoint_id, workload_id, day), bins))
    return packed.Merged(parts, metrics=metrics), totals


def _grouped_in_sql(rows: QuerySet[RunRollup]) -> list[tuple]:
    """(endpoint, workload, day, runs, ok, errors, packed bytes, rows not packed) per group,
    summed and the rows' packed triples concatenated in PostgreSQL (a day's rows come as one)."""
    inner = rows.values("endpoint_id", "workload_id", "day", "runs", "ok_count", "error_count")
    sql, params = inner.annotate(bins=F("packed")).query.get_compiler(rows.db).as_sql()
    # Built from the ORM's own SQL; the values stay in params.
    outer = (
        "SELECT q.endpoint_id, q.workload_id, q.day, sum(q.runs), sum(q.ok_count), "  # noqa: S608
        "sum(q.error_count), string_agg(q.bins, ''::bytea), count(*) - count(q.bins) "
        f"FROM ({sql}) q GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    )
    with connections[rows.db].cursor() as cursor:
        cursor.execute(outer, params)
        fetched = cursor.fetchall()  # one call: iterating the cursor cost a call per row
    return [(*row[:3], int(row[3]), int(row[4]), int(row[5]), *row[6:]) for row in fetched]


def _grouped(rows: QuerySet[RunRollup]) -> list[tuple]:
    """_grouped_in_sql on another database: summed and concatenated here (every group is
    marked as maybe holding a row not packed)."""
    found: dict[tuple, list] = {}
    ordered = rows.order_by("endpoint_id", "workload_id", "day").values_list(
        "endpoint_id", "workload_id", "day", "runs", "ok_count", "error_count", "packed"
    )
    for endpoint_id, workload_id, day, runs, ok, errors, data in ordered:
        group = found.setdefault((endpoint_id, workload_id, day), [0, 0, 0, b""])
        group[0] += runs
        group[1] += ok
        group[2] += errors
        group[3] += bytes(data or b"")
    return [(*key, *values, 1) for key, values in found.items()]


def _saturated_runs(
    endpoint_ids: list[int], workload_ids: list[int], vantage: Vantage, days: tuple[date, date]
) -> dict[tuple[int, int, date], int]:
    """Each (endpoint, workload, day)'s runs whose client was saturated, from the day rollups;
    groups without any are left out."""
    rows = (
        _day_rows(endpoint_ids, workload_ids, vantage, days)
        .filter(saturated_runs__gt=0)
        .values("endpoint_id", "workload_id", "day")
        .annotate(saturated=Sum("saturated_runs"))
        .order_by()
        .values_list("endpoint_id", "workload_id", "day", "saturated")
    )
    return {(e, w, d): int(n) for e, w, d, n in rows}


def _day_rows(
    endpoint_ids: list[int], workload_ids: list[int], vantage: Vantage, days: tuple[date, date]
):
    """The day rollup rows of these endpoints and workloads on the days (first, last)."""
    return RunRollup.objects.filter(
        span="day",
        vantage=vantage,
        endpoint_id__in=endpoint_ids,
        workload_id__in=workload_ids,
        day__gte=days[0],
        day__lte=days[1],
    )
