"""History chart points over long windows: one per UTC day, read from the day rollups.

docs/design.md ("History charts over 90 days"): a day's point is the median of its runs'
medians, with their p10–p90 as its band, from the day's rollup rows of that endpoint and
workload (every concurrency and time-of-day bucket merged; sketched, rollups.sketch). A year is
365 points per series instead of 1,095 runs, and no run summary is read.
"""

from collections.abc import Collection
from datetime import date, datetime
from typing import Any

import numpy as np
from django.db import connections, router
from django.db.models import QuerySet
from django.utils import timezone

from ..models import RunRollup, Vantage
from ..rollups import packed, sketch
from .scope import since

# Windows longer than this show day points (90 d and shorter: one point per run).
RUN_POINTS_UP_TO_HOURS = 90 * 24
# A day point's band and middle: p10, median and p90 of the day's run medians.
DAY_FRACTIONS = (0.1, 0.5, 0.9)
_MIDDLE = (0.5,)
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
    ttft_only: Collection[int] = (),
) -> dict[Key, list[dict[str, Any]]]:
    """Each (endpoint, workload)'s day points over the window's UTC days (the day `window_hours`
    ago to today), oldest first; a day without a finished run has no point. Each point has
    run_point's keys (no id, status, bucket or concurrency: a day has none of one run's) plus
    "day", "runs", "saturated_runs" (of those runs, the ones whose client was saturated:
    docs/design.md §4) and "bands" ({metric: {"low", "high"} or None} for "ttft" and "decode").
    ttft_only: workloads whose points are only "slot", "day" and "ttft_ms" (the same values;
    the base vs long-context chart reads no more of a workload it does not chart)."""
    series: dict[Key, list[dict[str, Any]]] = {
        (e, w): [] for e in endpoint_ids for w in workload_ids
    }
    if vantage is None or not endpoint_ids or not workload_ids:
        return series
    now = now or timezone.now()
    first = since(window_hours, now=now).date()
    merged, totals = _day_merged(
        endpoint_ids,
        workload_ids,
        vantage,
        (first, now.date()),
        metrics=tuple(POINT_METRICS),
        saturated=True,
    )
    ttft_lows, ttfts, ttft_highs = merged.columns("ttft", DAY_FRACTIONS)
    decode_lows, decodes, decode_highs = merged.columns("decode", DAY_FRACTIONS)
    # Only the middle of these two is shown: their other quantiles are not read.
    (e2e,) = merged.columns("e2e", _MIDDLE)
    (throughput,) = merged.columns("throughput", _MIDDLE)
    texts: dict[date, tuple[str, str]] = {}
    rows = zip(
        merged.groups, ttfts, decodes, e2e, throughput, ttft_lows, ttft_highs, decode_lows,
        decode_highs, strict=True,
    )  # fmt: skip
    for group, ttft_ms, decode_tps, e2e_ms, throughput_tps, *bands in rows:
        endpoint_id, workload_id, day = group
        if (names := texts.get(day)) is None:
            names = texts[day] = (day.isoformat(), f"{day.isoformat()}T00:00:00+00:00")
        text, slot = names
        if workload_id in ttft_only:
            point = {"slot": slot, "day": text, "ttft_ms": ttft_ms}
            series[(endpoint_id, workload_id)].append(point)
            continue
        runs, ok, errors, saturated = totals[group]
        low, high, decode_low, decode_high = bands
        series[(endpoint_id, workload_id)].append(
            {
                "id": None,
                "slot": slot,
                "day": text,
                "status": None,
                "tod_bucket": None,
                "concurrency": None,
                "runs": runs,
                "saturated_runs": saturated,
                "ok": ok,
                "errors": errors,
                "ttft_ms": ttft_ms,
                "decode_tps": decode_tps,
                "e2e_ms": e2e_ms,
                "throughput_tps": throughput_tps,
                "bands": {"ttft": _band(low, high), "decode": _band(decode_low, decode_high)},
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
    saturated: bool = False,
) -> tuple[packed.Merged, dict[tuple[int, int, date], tuple[int, int, int, int]]]:
    """The day rollup rows of the days (first, last) merged per (endpoint, workload, day)
    group, groups in that order, and each group's (runs, ok, errors, saturated runs: 0 unless
    `saturated`); a row not packed yet (before migration 0023) is read from its JSON
    sketches."""
    database = router.db_for_read(RunRollup)
    if connections[database].vendor == "postgresql":
        scope = (vantage.id, endpoint_ids, workload_ids, *days)
        grouped = _grouped_in_sql(database, scope, saturated=saturated)
    else:
        grouped = _grouped(_day_rows(endpoint_ids, workload_ids, vantage, days))
    totals: dict[tuple[int, int, date], tuple[int, int, int, int]] = {}
    blobs = []
    for endpoint_id, workload_id, day, runs, ok, errors, runs_saturated, data, *_ in grouped:
        totals[(endpoint_id, workload_id, day)] = (runs, ok, errors, runs_saturated)
        blobs.append(bytes(data or b""))
    # One array for every group (a view each): unpacking each group alone cost more.
    triples = packed.unpack(b"".join(blobs))
    lengths = [len(blob) // 12 for blob in blobs]
    if not any(row[8] for row in grouped):
        return packed.Merged.of_groups(list(totals), triples, lengths, metrics), totals
    ends = np.cumsum(lengths).tolist()
    parts: list[tuple[Any, np.ndarray]] = [
        (group, triples[end - length : end])
        for group, length, end in zip(totals, lengths, ends, strict=True)
    ]
    unpacked = _day_rows(endpoint_ids, workload_ids, vantage, days).filter(packed__isnull=True)
    unpacked = unpacked.values_list("endpoint_id", "workload_id", "day", "sketches")
    for endpoint_id, workload_id, day, sketches in unpacked:
        bins = np.array(sketch.triples(sketches), dtype=np.int32).reshape(-1, 3)
        parts.append(((endpoint_id, workload_id, day), bins))
    return packed.Merged(parts, metrics=metrics), totals


def _grouped_in_sql(database: str, scope: tuple, *, saturated: bool) -> list[tuple]:
    """(endpoint, workload, day, runs, ok, errors, saturated runs, packed bytes, rows not
    packed) per group of _day_rows' rows, scope = (vantage id, endpoint ids, workload ids,
    first day, last day): summed and the rows' packed triples concatenated in PostgreSQL (a
    day's rows come as one). Written out rather than built by the ORM (a request's worth of
    its query building cost more than PostgreSQL's work here); saturated runs are summed only
    when asked (the index holds the rest: rollup_day_points)."""
    table = connections[database].ops.quote_name(RunRollup._meta.db_table)
    saturated_sum = "sum(saturated_runs)" if saturated else "0"
    params = list(scope)
    # One workload compared by equality: the index then gives the rows in the groups' order (a
    # list, even of one, on its second column leaves PostgreSQL to sort a year of rows).
    workloads = "= ANY(%s)"
    if len(params[2]) == 1:
        workloads, params[2] = "= %s", params[2][0]
    # Built from the model's table name and constants; the values stay in params.
    sql = (
        "SELECT endpoint_id, workload_id, day, sum(runs), sum(ok_count), "  # noqa: S608
        f"sum(error_count), {saturated_sum}, string_agg(packed, ''::bytea), "
        f"count(*) - count(packed) FROM {table} WHERE span = 'day' AND vantage_id = %s "
        f"AND endpoint_id = ANY(%s) AND workload_id {workloads} AND day >= %s AND day <= %s "
        "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    )
    with connections[database].cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()  # one call: iterating the cursor cost a call per row
    return [
        (*row[:3], int(row[3]), int(row[4]), int(row[5]), int(row[6]), *row[7:]) for row in fetched
    ]


def _grouped(rows: QuerySet[RunRollup]) -> list[tuple]:
    """_grouped_in_sql on another database: summed and concatenated here (every group is
    marked as maybe holding a row not packed)."""
    found: dict[tuple, list] = {}
    ordered = rows.order_by("endpoint_id", "workload_id", "day").values_list(
        "endpoint_id", "workload_id", "day", "runs", "ok_count", "error_count",
        "saturated_runs", "packed",
    )  # fmt: skip
    for endpoint_id, workload_id, day, runs, ok, errors, saturated, data in ordered:
        group = found.setdefault((endpoint_id, workload_id, day), [0, 0, 0, 0, b""])
        group[0] += runs
        group[1] += ok
        group[2] += errors
        group[3] += saturated
        group[4] += bytes(data or b"")
    return [(*key, *values, 1) for key, values in found.items()]


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
