"""An exact history's grouped reads (windows of 90 days and less) as PostgreSQL text: the
concurrency curve, the base vs long-context pairs and the errors by category of the window's
runs, without building a queryset per read.

The same runs, groups and aggregates as selectors.history's ORM queries over
scope.window_runs (which SQLite still uses): on PostgreSQL building and compiling those
querysets was most of their app CPU (the curve ~0.8 of 1.2 ms at 4×). The WHERE clause is
the one the ORM writes for the window (the same text, so the same plans and row order); the
values are parameters. The answers are the ORM queries' (tests/dashboard/test_history_sql.py).
"""

import json
from datetime import datetime
from typing import Any

from django.db import connections, router

from ..models import Run, Vantage, Workload
from .runs import POINT_FIELDS, point_rows_of, slot_iso_sql
from .scope import FINISHED

_TABLE = f'"{Run._meta.db_table}"'
_FINISHED = tuple(sorted(FINISHED))


def _column(name: str) -> str:
    return f'{_TABLE}."{name}"'


def _median(column: str) -> str:
    return f"percentile_cont(0.5) WITHIN GROUP (ORDER BY {_column(column)})"


class RunWindow:
    """The finished, not downgraded runs of one vantage whose slot is `start` or later, of
    one endpoint (`endpoint_id`) or several (`endpoint_ids`): scope.window_runs filtered by
    endpoint, as a WHERE clause."""

    def __init__(
        self,
        *,
        vantage: Vantage,
        start: datetime,
        endpoint_id: int | None = None,
        endpoint_ids: list[int] | None = None,
    ) -> None:
        statuses = ", ".join(["%s"] * len(_FINISHED))
        where = [
            f"{_column('slot')} >= %s",
            f"NOT {_column('downgraded')}",
            f"{_column('status')} IN ({statuses})",
            f"{_column('vantage_id')} = %s",
        ]
        params: list[Any] = [start, *_FINISHED, vantage.id]
        if endpoint_ids is not None:
            where.append(f"{_column('endpoint_id')} IN ({', '.join(['%s'] * len(endpoint_ids))})")
            params.extend(endpoint_ids)
        else:
            where.append(f"{_column('endpoint_id')} = %s")
            params.append(endpoint_id)
        self.where = " AND ".join(where)
        self.params = params
        self.database = router.db_for_read(Run)

    @classmethod
    def of(
        cls,
        vantage: Vantage | None,
        start: datetime,
        *,
        endpoint_id: int | None = None,
        endpoint_ids: list[int] | None = None,
    ) -> "RunWindow | None":
        """The window on PostgreSQL; None on another database, or without a vantage (no run
        then, which the ORM's empty queryset answers without asking)."""
        if vantage is None or connections[router.db_for_read(Run)].vendor != "postgresql":
            return None
        return cls(vantage=vantage, start=start, endpoint_id=endpoint_id, endpoint_ids=endpoint_ids)

    def concurrency_rows(
        self, workloads: tuple[Workload, ...], *, by_endpoint: bool
    ) -> list[tuple[Any, ...]]:
        """history._concurrency_rows' groups of the base-context workloads' runs, lowest
        concurrency first (per endpoint first with `by_endpoint`): ([endpoint id,]
        concurrency, runs, saturated runs, median decode, throughput and TTFT)."""
        ids = [w.id for w in workloads if w.context_tokens == 0]
        if not ids:
            return []
        keys = f"{_column('endpoint_id')}, " if by_endpoint else ""
        # Constant fragments and the model's table name; the values are parameters.
        sql = (
            f"SELECT {keys}{_column('concurrency')}, COUNT({_column('id')}), "  # noqa: S608
            f"COUNT({_column('id')}) FILTER (WHERE {_column('saturated_count')} > 0), "
            f"{_median('decode_tps_p50')}, {_median('throughput_tps')}, "
            f"{_median('ttft_p50_ms')} FROM {_TABLE} WHERE {self.where} AND "
            f"{_column('workload_id')} IN ({', '.join(['%s'] * len(ids))}) "
            f"GROUP BY {keys}{_column('concurrency')} ORDER BY {keys}{_column('concurrency')}"
        )
        return self._fetched(sql, [*self.params, *ids])

    def context_pairs(self, base: Workload, long: Workload) -> list[tuple[str, Any, Any]]:
        """history._context's slots in time order: (slot as isoformat text, base TTFT,
        long-context TTFT), either None when that run is missing."""
        ttft, workload = _column("ttft_p50_ms"), _column("workload_id")
        # Constant fragments and the model's table name; the values are parameters.
        sql = (
            f"SELECT {slot_iso_sql(_column('slot'))}, "  # noqa: S608
            f"MAX({ttft}) FILTER (WHERE {workload} = %s), "
            f"MAX({ttft}) FILTER (WHERE {workload} = %s) FROM {_TABLE} "
            f"WHERE {self.where} AND {workload} IN (%s, %s) "
            f"GROUP BY {_column('slot')} ORDER BY {_column('slot')} ASC"
        )
        return self._fetched(sql, [base.id, long.id, *self.params, base.id, long.id])

    def point_rows(self, workload_id: int) -> list[dict[str, Any]]:
        """runs.point_rows of one workload's runs, oldest first."""
        columns = ", ".join(_column(name) for name in POINT_FIELDS)
        # Constant fragments and the model's table name; the values are parameters.
        sql = (
            f"SELECT {columns}, ({_column('summary')} || '{{}}'::jsonb) AS whole, "  # noqa: S608
            f"{slot_iso_sql(_column('slot'))} AS slot_text FROM {_TABLE} "
            f"WHERE {self.where} AND {_column('workload_id')} = %s "
            f"ORDER BY {_column('slot')} ASC"
        )
        return point_rows_of((sql, [*self.params, workload_id]), self.database)

    def compare_points(self, workload_id: int) -> list[tuple[Any, ...]]:
        """history._compare_points' runs of one workload, per endpoint in time order:
        (endpoint id, slot as isoformat text, time-of-day bucket, TTFT, decode)."""
        # Constant fragments and the model's table name; the values are parameters.
        sql = (
            f"SELECT {_column('endpoint_id')}, {slot_iso_sql(_column('slot'))}, "  # noqa: S608
            f"{_column('tod_bucket')}, {_column('ttft_p50_ms')}, {_column('decode_tps_p50')} "
            f"FROM {_TABLE} WHERE {self.where} AND {_column('workload_id')} = %s "
            f"ORDER BY {_column('endpoint_id')} ASC, {_column('slot')} ASC"
        )
        return self._fetched(sql, [*self.params, workload_id])

    def slot_pairs(self, base: Workload, long: Workload) -> tuple[str, list[Any]]:
        """The statement (and its params) of one row per (endpoint, slot) with a base or
        long-context run: endpoint_id, base and long (their TTFT, None when missing)."""
        ttft, workload, endpoint = (
            _column(name) for name in ("ttft_p50_ms", "workload_id", "endpoint_id")
        )
        # Constant fragments and the model's table name; the values are parameters.
        sql = (
            f"SELECT {endpoint}, MAX({ttft}) FILTER (WHERE {workload} = %s) AS "  # noqa: S608
            f'"base", MAX({ttft}) FILTER (WHERE {workload} = %s) AS "long" FROM {_TABLE} '
            f"WHERE {self.where} AND {workload} IN (%s, %s) "
            f"GROUP BY {endpoint}, {_column('slot')}"
        )
        return sql, [base.id, long.id, *self.params, base.id, long.id]

    def error_tallies(self) -> list[Any]:
        """Each erring run's errors_by_category (decoded JSON; None when absent), newest run
        first: the rows runs.errors_by_category reads, in its order."""
        # Constant fragments and the model's table name; the values are parameters.
        sql = (
            f"SELECT ({_column('summary')} -> %s) FROM {_TABLE} "  # noqa: S608
            f"WHERE {self.where} AND {_column('error_count')} > %s "
            f"ORDER BY {_column('slot')} DESC"
        )
        rows = self._fetched(sql, ["errors_by_category", *self.params, 0])
        # A raw cursor reads jsonb as its text (Django's PostgreSQL backend).
        return [None if text is None else json.loads(text) for (text,) in rows]

    def _fetched(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        with connections[self.database].cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
