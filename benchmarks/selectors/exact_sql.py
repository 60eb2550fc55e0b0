"""The exact windows' grouped reads as PostgreSQL text: the leaderboard's primary figures and
concurrency groups from the runs of a window, without building a queryset per read.

The same runs and aggregates as the leaderboard's ORM queries (scope.window_runs,
board_queries.primary, primary_stats, concurrency_groups), which SQLite still uses: on
PostgreSQL building and compiling those querysets cost ~2 ms of app CPU a board (7 d, 2×), and
unpacking each quartile array in Python as much again. Here the statements are assembled from
constant fragments, the values are parameters, and each quartile comes back as its own column
(`(percentile_cont(ARRAY[…]) …)[i]`: PostgreSQL computes an aggregate written three times
once). The answers are the ORM queries' (tests/dashboard/test_exact_window_sql.py).
"""

from datetime import datetime
from typing import Any

from django.db import connections

from ..models import Run, Vantage
from .filters import PEAK, BoardFilters
from .scope import FINISHED, Workloads, since

# Quoted as the ORM quotes it (so a statement shows which table it reads, as queries do).
_TABLE = f'"{Run._meta.db_table}"'
_FINISHED = tuple(sorted(FINISHED))
_QUARTILES = ("p25", "p50", "p75")


def _quartile_columns(column: str, name: str) -> list[str]:
    aggregate = f"percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY {column})"
    return [f"({aggregate})[{i}] AS {name}_{q}" for i, q in enumerate(_QUARTILES, start=1)]


def _median(column: str, name: str) -> str:
    return f"percentile_cont(0.5) WITHIN GROUP (ORDER BY {column}) AS {name}"


_SATURATED = "COUNT(saturated_count) FILTER (WHERE saturated_count > 0)"
_PRIMARY_COLUMNS = ", ".join(
    [
        "endpoint_id",
        "COUNT(*) AS runs",
        "SUM(ok_count) AS ok",
        "SUM(error_count) AS errors",
        f"{_SATURATED} AS saturated_runs",
        _median("input_tokens", "input_tokens"),
        _median("output_tokens_p50", "output_tokens"),
        *_quartile_columns("ttft_p50_ms", "ttft"),
        *_quartile_columns("decode_tps_p50", "decode"),
        *_quartile_columns("e2e_p50_ms", "e2e"),
    ]
)
_SHARED_COLUMNS = ", ".join(
    [
        _median("throughput_tps", "throughput"),
        "MIN(concurrency) AS concurrency_min",
        "MAX(concurrency) AS concurrency_max",
    ]
)
# The columns of primary_tuples and group_tuples, in order (the names primary_stats and
# concurrency_groups give them).
PRIMARY_ORDER = (
    "endpoint_id",
    "runs",
    "ok",
    "errors",
    "saturated_runs",
    "input_tokens",
    "output_tokens",
    *(f"{name}_{q}" for name in ("ttft", "decode", "e2e") for q in _QUARTILES),
)
SHARED_ORDER = ("throughput", "concurrency_min", "concurrency_max")
GROUP_ORDER = (
    "endpoint_id",
    "workload_id",
    "concurrency",
    "decode",
    "throughput",
    "runs",
    "saturated",
)
_GROUP_COLUMNS = ", ".join(
    [
        "endpoint_id",
        "workload_id",
        "concurrency",
        _median("decode_tps_p50", "decode"),
        _median("throughput_tps", "throughput"),
        "COUNT(*) AS runs",
        f"{_SATURATED} AS saturated",
    ]
)


class ExactWindow:
    """The finished, not downgraded runs of one vantage in a board's window (and bucket), of
    `endpoint_ids` when given: scope.window_runs as a WHERE clause."""

    def __init__(
        self,
        filters: BoardFilters,
        *,
        vantage: Vantage,
        endpoint_ids: list[int] | None,
        database: str,
    ) -> None:
        start: datetime = (
            filters.since
            if filters.since is not None
            else since(filters.window_hours, now=filters.until)
        )
        where = [
            "vantage_id = %s",
            "slot >= %s",
            f"status IN ({', '.join(['%s'] * len(_FINISHED))})",
            "NOT downgraded",
        ]
        params: list[Any] = [vantage.id, start, *_FINISHED]
        if filters.until is not None:
            where.append("slot < %s")
            params.append(filters.until)
        if filters.tod_bucket is not None:
            where.append("tod_bucket = %s")
            params.append(filters.tod_bucket)
        if endpoint_ids is not None:
            where.append("endpoint_id = ANY(%s::bigint[])")
            params.append(list(endpoint_ids))
        self.where = where
        self.params = params
        self.database = database

    def primary_stats(
        self, workload_ids: list[int], *, concurrency: int | None, shared: bool
    ) -> list[dict[str, Any]]:
        """board_queries.primary_stats of the runs of these workloads (at this run concurrency
        when given): per endpoint, counts, medians, quartiles; with `shared`, also the median
        throughput and the range of run concurrencies."""
        if not workload_ids:
            return []
        return self._rows(*self._primary(workload_ids, concurrency=concurrency, shared=shared))

    def primary_tuples(
        self, workload_ids: list[int], *, concurrency: int | None, shared: bool
    ) -> list[tuple[Any, ...]]:
        """primary_stats' rows as tuples, columns in PRIMARY_ORDER (then SHARED_ORDER)."""
        if not workload_ids:
            return []
        return self._tuples(*self._primary(workload_ids, concurrency=concurrency, shared=shared))

    def _primary(
        self, workload_ids: list[int], *, concurrency: int | None, shared: bool
    ) -> tuple[str, list[Any]]:
        columns = f"{_PRIMARY_COLUMNS}, {_SHARED_COLUMNS}" if shared else _PRIMARY_COLUMNS
        where, params = self._of(workload_ids, None)
        if concurrency is not None:
            where += " AND concurrency = %s"
            params.append(concurrency)
        # Constant fragments and the model's table name; the values are parameters.
        return f"SELECT {columns} FROM {_TABLE} WHERE {where} GROUP BY 1", params  # noqa: S608

    def concurrency_groups(
        self, workload_ids: list[int], endpoint_ids: list[int] | None
    ) -> list[dict[str, Any]]:
        """board_queries.concurrency_groups: median decode and throughput, runs and saturated
        runs per (endpoint, workload, concurrency) of these workloads (and endpoints)."""
        if not workload_ids or (endpoint_ids is not None and not endpoint_ids):
            return []
        return self._rows(*self._groups(workload_ids, endpoint_ids))

    def group_tuples(
        self, workload_ids: list[int], endpoint_ids: list[int] | None
    ) -> list[tuple[Any, ...]]:
        """concurrency_groups' rows as tuples, columns in GROUP_ORDER."""
        if not workload_ids or (endpoint_ids is not None and not endpoint_ids):
            return []
        return self._tuples(*self._groups(workload_ids, endpoint_ids))

    def _groups(
        self, workload_ids: list[int], endpoint_ids: list[int] | None
    ) -> tuple[str, list[Any]]:
        # One grouped range per workload, their rows put together (UNION ALL): two or three
        # smaller sorts into groups cost less than one over every workload's runs (7 d at 4×,
        # parallel-10 and peak: ~9.4 ms backend instead of ~10.5; with base too, ~14.1
        # instead of ~16.2).
        parts, params = [], []
        for workload_id in workload_ids:
            where, values = self._of([workload_id], endpoint_ids)
            # Constant fragments and the model's table name; the values are parameters.
            sql = f"SELECT {_GROUP_COLUMNS} FROM {_TABLE} WHERE {where} GROUP BY 1, 2, 3"  # noqa: S608
            parts.append(f"({sql})")
            params += values
        return " UNION ALL ".join(parts), params

    def _of(self, workload_ids: list[int], endpoint_ids: list[int] | None) -> tuple[str, list[Any]]:
        # One workload as `=`, several as `IN`: the run_board index's ranges either way.
        marks = ", ".join(["%s"] * len(workload_ids))
        where = [*self.where, f"workload_id IN ({marks})"]
        params = [*self.params, *workload_ids]
        if endpoint_ids is not None:
            where.append("endpoint_id = ANY(%s::bigint[])")
            params.append(list(endpoint_ids))
        return " AND ".join(where), params

    def _rows(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        with connections[self.database].cursor() as cursor:
            cursor.execute(sql, params)
            names = [column.name for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _tuples(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        with connections[self.database].cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()


def primary_workloads(filters: BoardFilters, workloads: Workloads) -> tuple[list[int], int | None]:
    """board_queries.primary as (workload ids, run concurrency or None): which runs feed the
    main columns. "peak" is the workloads sized to each endpoint's peak (concurrency 0)."""
    if filters.workload:
        workload = workloads.by_slug(filters.workload)
        ids = [workload.id] if workload else []
    elif filters.concurrency is not None:
        ids = [w.id for w in workloads.base_context()]
    else:
        base = workloads.base()
        return ([base.id] if base else []), None
    if filters.concurrency == PEAK:
        peak = {w.id for w in workloads.items if w.concurrency == 0}
        return [i for i in ids if i in peak], None
    return ids, filters.concurrency
