"""Reading rollups for a long window: the leaderboard's figures from merged sketches.

A sketched window counts whole UTC days, from the day `window` ago to today: its window
rollup (rollups.windows: the days through yesterday, one row per key) plus today's day rows.
Until the day's window rollups are written, the day and month rows are merged instead (the
same figures, slower). Sketches are merged in one numpy pass (rollups.packed).
"""

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.db import connections, router
from django.db.models import Q
from django.utils import timezone

from ..buckets import BUCKETS
from ..models import RunRollup, Vantage, WindowRollup
from . import packed, sketch
from .windows import days_q

QUARTILES = (0.25, 0.5, 0.75)
_FIELDS = (
    "endpoint_id", "workload_id", "concurrency", "tod_bucket", "runs", "ok_count",
    "error_count", "saturated_runs",
)  # fmt: skip


def window_q(window_hours: int, *, now: datetime | None = None) -> Q:
    """Rollup rows covering the UTC days from `window_hours` ago to today, each day once."""
    now = now or timezone.now()
    return days_q((now - timedelta(hours=window_hours)).date(), now.date())


def rollup_rows(
    *,
    vantage: Vantage | None,
    window_hours: int,
    tod_bucket: int | None,
    endpoint_ids: Collection[int] | None,
    workload_ids: Collection[int],
    now: datetime | None = None,
    buckets: bool = False,
) -> list[dict[str, Any]]:
    """The window's rollups in scope (these workloads; these endpoints, or every one when
    None): dicts of _FIELDS and "bins" (packed triples).
    buckets: each time-of-day bucket's rows instead of the whole day's (tod_bucket None only;
    a window row then has its bucket, not ALL_BUCKETS).

    A window row comes with its near sketch ("window_id" and "margin" set): merge rows only
    after settle(), which reads the whole sketch of any group the near one cannot answer.

    The window rows and today's day rows are read by SQL written out here: every board and
    history of a long window reads them, and building the two queries through the ORM cost
    more than PostgreSQL's work."""
    if vantage is None or not workload_ids or (endpoint_ids is not None and not endpoint_ids):
        return []
    now = now or timezone.now()
    today = now.date()
    days = window_hours // 24
    database = router.db_for_read(WindowRollup)
    day_value = connections[database].ops.adapt_datefield_value
    scope, params = _scope_sql(vantage.id, workload_ids, endpoint_ids)
    window_buckets = _window_buckets(tod_bucket, buckets=buckets)
    # Built from the models' table names, column names and constants; values stay in params.
    window_sql = (
        f"SELECT {_columns(WindowRollup, database, 'near')} "  # noqa: S608
        f"FROM {_table(WindowRollup, database)} "
        f"WHERE {scope} AND days = %s AND through_day = %s "
        f"AND tod_bucket IN ({_marks(window_buckets)})"
    )
    window_params = [*params, days, day_value(today - timedelta(days=1)), *window_buckets]
    rows = []
    for values in _fetched(database, window_sql, window_params):
        row = _row(values[:-2], packed.unpack(values[-1]))
        row["window_id"] = values[-2]
        # No near sketch yet (written before migration 0025): read whole by settle().
        row["margin"] = packed.margin_of(row["runs"], days) if values[-1] is not None else -1
        row["whole"] = False
        rows.append(row)
    if rows:
        day_sql = (
            f"SELECT {_columns(RunRollup, database, 'packed')} "  # noqa: S608
            f"FROM {_table(RunRollup, database)} "
            f"WHERE {scope} AND span = 'day' AND day = %s"
        )
        day_params = [*params, day_value(today)]
        if tod_bucket is not None:
            day_sql += " AND tod_bucket = %s"
            day_params.append(tod_bucket)
        day_rows = _fetched(database, day_sql, day_params)
    else:  # the day's window rollups are not written yet: the window's day and month rows
        where = Q(vantage=vantage, workload_id__in=workload_ids)
        if endpoint_ids is not None:
            where &= Q(endpoint_id__in=endpoint_ids)
        bucket = Q() if tod_bucket is None else Q(tod_bucket=tod_bucket)
        day_rows = RunRollup.objects.filter(
            where, bucket, window_q(window_hours, now=now)
        ).values_list(*_FIELDS, "id", "packed")
    unpacked: dict[int, dict[str, Any]] = {}
    for values in day_rows:
        row = _row(values[:-2], packed.unpack(values[-1]))
        if values[-1] is None:  # not packed yet (written before migration 0023)
            unpacked[values[-2]] = row
        rows.append(row)
    if unpacked:
        for row_id, sketches in RunRollup.objects.filter(id__in=unpacked).values_list(
            "id", "sketches"
        ):
            bins = np.array(sketch.triples(sketches), dtype=np.int32).reshape(-1, 3)
            unpacked[row_id]["bins"] = bins
    return rows


def _scope_sql(
    vantage_id: int, workload_ids: Collection[int], endpoint_ids: Collection[int] | None
) -> tuple[str, list[Any]]:
    """The WHERE clause (and its params) of rows of a vantage, workloads and endpoints (each
    list not empty)."""
    sql = f"vantage_id = %s AND workload_id IN ({_marks(workload_ids)})"
    params = [vantage_id, *workload_ids]
    if endpoint_ids is not None:
        sql += f" AND endpoint_id IN ({_marks(endpoint_ids)})"
        params.extend(endpoint_ids)
    return sql, params


def _marks(values: Collection[Any]) -> str:
    return ", ".join(["%s"] * len(values))


def _table(model: Any, database: str) -> str:
    return connections[database].ops.quote_name(model._meta.db_table)


def _columns(model: Any, database: str, sketch_column: str) -> str:
    """_FIELDS, the row's id and its sketch column, named with their table."""
    quote = connections[database].ops.quote_name
    table = _table(model, database)
    return ", ".join(f"{table}.{quote(name)}" for name in (*_FIELDS, "id", sketch_column))


def _fetched(database: str, sql: str, params: list[Any]) -> list[tuple]:
    with connections[database].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _window_buckets(tod_bucket: int | None, *, buckets: bool) -> list[int]:
    if tod_bucket is not None:
        return [tod_bucket]
    return list(BUCKETS) if buckets else [WindowRollup.ALL_BUCKETS]


def settle(rows: list[dict[str, Any]], group_of, metrics: Iterable[str]) -> list[dict[str, Any]]:
    """`rows` ready to merge by `group_of` for `metrics`: a group keeps its window row's near
    sketch only when it has one window row and today's rows add at most its margin of values
    to each metric (packed.near: then every quartile is the whole sketch's); any other group's
    window rows are read whole (one query). Rows are updated in place (a whole sketch answers
    every grouping) and returned."""
    codes = [sketch.METRIC_CODES[metric] for metric in metrics]
    windows: dict[Any, list[dict[str, Any]]] = {}
    today: list[tuple[Any, np.ndarray]] = []
    for row in rows:
        if "window_id" in row:
            windows.setdefault(group_of(row), []).append(row)
        else:
            today.append((group_of(row), row["bins"]))
    added = _most_added(today, codes)
    whole: dict[int, dict[str, Any]] = {}
    for group, members in windows.items():
        if len(members) > 1 or added.get(group, 0) > min(row["margin"] for row in members):
            whole.update((row["window_id"], row) for row in members if not row["whole"])
    if whole:
        for row_id, data in WindowRollup.objects.filter(id__in=whole).values_list("id", "packed"):
            row = whole[row_id]
            row["bins"], row["whole"], row["margin"] = packed.unpack(data), True, 2**62
    return rows


def _most_added(parts: list[tuple[Any, np.ndarray]], codes: list[int]) -> dict[Any, int]:
    """Per group: the most values today's rows add to any one of these metrics (one pass)."""
    if not parts:
        return {}
    number: dict[Any, int] = {}
    for group, _ in parts:
        number.setdefault(group, len(number))
    lengths = [len(bins) for _, bins in parts]
    data = np.concatenate([bins for _, bins in parts])
    groups = np.repeat(np.array([number[group] for group, _ in parts]), lengths)
    keep = np.isin(data[:, 0], codes)
    width = max(sketch.METRIC_CODES.values()) + 1
    counts = np.bincount(
        groups[keep] * width + data[keep, 0], weights=data[keep, 2], minlength=len(number) * width
    ).reshape(len(number), width)
    most = counts.max(axis=1)
    return {group: int(most[index]) for group, index in number.items()}


def _endpoint(row: dict[str, Any]) -> int:
    return row["endpoint_id"]


def _row(values: tuple, bins: np.ndarray) -> dict[str, Any]:
    return {**dict(zip(_FIELDS, values, strict=True)), "bins": bins}


def _totals(rows: Iterable[dict[str, Any]], group_of) -> dict[Any, dict[str, Any]]:
    totals: dict[Any, dict[str, Any]] = {}
    for row in rows:
        total = totals.setdefault(
            group_of(row),
            {"runs": 0, "ok": 0, "errors": 0, "saturated_runs": 0, "concurrencies": set()},
        )
        total["runs"] += row["runs"]
        total["ok"] += row["ok_count"]
        total["errors"] += row["error_count"]
        total["saturated_runs"] += row["saturated_runs"]
        total["concurrencies"].add(row["concurrency"])
    return totals


def primary_stats(rows: list[dict[str, Any]], *, shared: bool) -> list[dict[str, Any]]:
    """Per endpoint, the fields of the exact board's primary query, from merged sketches."""
    metrics = ["input_tokens", "output_tokens", "ttft", "decode", "e2e"]
    if shared:
        metrics.append("throughput")
    rows = settle(rows, _endpoint, metrics)
    merged = packed.Merged([(row["endpoint_id"], row["bins"]) for row in rows], metrics)
    out = []
    for endpoint_id, total in _totals(rows, lambda row: row["endpoint_id"]).items():
        group: dict[str, Any] = {
            "endpoint_id": endpoint_id,
            "runs": total["runs"],
            "ok": total["ok"],
            "errors": total["errors"],
            "saturated_runs": total["saturated_runs"],
            "input_tokens": merged.quantiles(endpoint_id, "input_tokens", [0.5])[0],
            "output_tokens": merged.quantiles(endpoint_id, "output_tokens", [0.5])[0],
        }
        for metric in ("ttft", "decode", "e2e"):
            values = merged.quantiles(endpoint_id, metric, QUARTILES)
            for name, value in zip(("p25", "p50", "p75"), values, strict=True):
                group[f"{metric}_{name}"] = value
        if shared:
            group["throughput"] = merged.quantiles(endpoint_id, "throughput", [0.5])[0]
            group["concurrency_min"] = min(total["concurrencies"])
            group["concurrency_max"] = max(total["concurrencies"])
        out.append(group)
    return out


def concurrency_groups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median decode and throughput per (endpoint, workload, concurrency)."""

    def key(row: dict[str, Any]) -> tuple[int, int, int]:
        return (row["endpoint_id"], row["workload_id"], row["concurrency"])

    rows = settle(rows, key, ("decode", "throughput"))
    merged = packed.Merged([(key(row), row["bins"]) for row in rows], ("decode", "throughput"))
    return [
        {
            "endpoint_id": endpoint_id,
            "workload_id": workload_id,
            "concurrency": concurrency,
            "decode": merged.quantiles(group, "decode", [0.5])[0],
            "throughput": merged.quantiles(group, "throughput", [0.5])[0],
            "runs": total["runs"],
            "saturated": total["saturated_runs"],
        }
        for group, total in _totals(rows, key).items()
        for endpoint_id, workload_id, concurrency in [group]
    ]


def prefill_quartiles(rows: list[dict[str, Any]]) -> dict[int, tuple]:
    """Per endpoint: (p25, p50, p75) of the paired long − base TTFT deltas."""
    rows = settle(rows, _endpoint, ("prefill",))
    merged = packed.Merged([(row["endpoint_id"], row["bins"]) for row in rows], ("prefill",))
    out = {}
    for endpoint_id in merged.groups:
        values = merged.quantiles(endpoint_id, "prefill", QUARTILES)
        if values[0] is not None:
            out[endpoint_id] = tuple(values)
    return out
