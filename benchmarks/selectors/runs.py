"""Reading one Run row (its denormalised summary) into chart points."""

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import connections
from django.db.models import CharField, Func, JSONField, QuerySet
from django.db.models.fields.json import KeyTransform

from ..models import Run

RUN_POINT_FIELDS = (
    "id",
    "slot",
    "status",
    "tod_bucket",
    "concurrency",
    "ok_count",
    "error_count",
    "ttft_p50_ms",
    "decode_tps_p50",
    "e2e_p50_ms",
    "throughput_tps",
    "saturated_count",
    "summary",
)
# A point row's columns read as they are (the summary's band scalars are read from it).
POINT_FIELDS = tuple(f for f in RUN_POINT_FIELDS if f != "summary")
# Summary metric name for each chart metric.
_SUMMARY_METRIC = {"ttft": "ttft_ms", "decode": "decode_tps"}


class SlotIso(Func):
    """A UTC timestamp column as the text datetime.isoformat() gives its value in Python
    ("2026-06-15T02:00:00+00:00", with ".ffffff" when there are microseconds): a long window's
    thousands of points read no datetime objects (loading one cost more than its whole row)."""

    output_field = CharField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list]:
        template = slot_iso_sql("%(expressions)s")
        return self.as_sql(compiler, connection, template=template, **extra)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list]:
        # Stored as "YYYY-MM-DD HH:MM:SS[.ffffff]" in UTC (str() of the naive UTC value).
        template = "(replace(%(expressions)s, ' ', 'T') || '+00:00')"
        return self.as_sql(compiler, connection, template=template, **extra)


def slot_iso_sql(column: str) -> str:
    """SlotIso's PostgreSQL expression of a timestamp column."""
    utc = f"({column} AT TIME ZONE 'UTC')"
    return (
        f"(to_char({utc}, 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN "
        f"mod(extract(microseconds FROM {utc})::bigint, 1000000) = 0 THEN '' "
        f"ELSE to_char({utc}, '.US') END || '+00:00')"
    )


def iso(slot: datetime | str) -> str:
    """A slot as isoformat() text, whether read as a datetime or through SlotIso."""
    return slot if isinstance(slot, str) else slot.isoformat()


def run_point(run: dict[str, Any]) -> dict[str, Any]:
    """A run as a JSON-ready chart point (values of Run fields as given by .values(), or
    point_rows' with the slot as text)."""
    return {
        "id": run["id"],
        "slot": iso(run["slot"]),
        "status": run["status"],
        "tod_bucket": run["tod_bucket"],
        "concurrency": run["concurrency"],
        "ok": run["ok_count"],
        "errors": run["error_count"],
        "ttft_ms": run["ttft_p50_ms"],
        "decode_tps": run["decode_tps_p50"],
        "e2e_ms": run["e2e_p50_ms"],
        "throughput_tps": run["throughput_tps"],
        # Samples whose client was saturated (docs/design.md §4): the point is marked, not hidden.
        "saturated": run["saturated_count"],
    }


def point_rows(runs: QuerySet[Run]) -> list[dict[str, Any]]:
    """RUN_POINT_FIELDS of the runs (in the queryset's order; the slot as SlotIso text on
    PostgreSQL), with only the parts of each
    summary the bands read: the p10 and p90 scalars of each metric, as numbers (a metric whose
    stats are not an object, or a value that is not a number, reads as missing, which run_band
    turns into no band, as it does the object).

    Each row's summary is decompressed once (`summary || '{}'` in a subquery that is not
    flattened) and the four scalars read from that copy: reading them from the stored column
    decompressed it four times a run, most of a year's history read in PostgreSQL."""
    fields = list(POINT_FIELDS)
    connection = connections[runs.db]
    if connection.vendor != "postgresql":
        return _point_rows_plain(runs, fields)
    inner = runs.values(*fields, whole=_Decompressed("summary"), slot_text=SlotIso("slot"))
    return point_rows_of(inner.query.get_compiler(inner.db).as_sql(), runs.db)


def point_rows_of(inner: tuple[str, Any], database: str) -> list[dict[str, Any]]:
    """point_rows of a PostgreSQL statement (and its params) whose rows, in order, are the
    runs' POINT_FIELDS, "whole" (the summary decompressed: `summary || '{}'`) and "slot_text"
    (the slot as SlotIso text)."""
    fields = POINT_FIELDS
    connection = connections[database]
    sql, params = inner
    scalars = [
        _number(f"q.whole -> '{key}' -> '{p}'") for key in _SUMMARY_METRIC.values() for p in _BAND
    ]
    columns = ", ".join(
        "q.slot_text" if f == "slot" else f"q.{connection.ops.quote_name(f)}" for f in fields
    )
    # Built from the ORM's own SQL, column names and constants; the values stay in params. A
    # subquery scan returns the rows in the order the inner query sorted them.
    outer = f"SELECT {columns}, {', '.join(scalars)} FROM ({sql} OFFSET 0) q"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(outer, params)
        fetched = cursor.fetchall()
    rows = []
    for values in fetched:
        row = dict(zip(fields, values[: len(fields)], strict=True))
        bands = iter(values[len(fields) :])
        row["summary"] = {key: {p: next(bands) for p in _BAND} for key in _SUMMARY_METRIC.values()}
        rows.append(row)
    return rows


def _number(path: str) -> str:
    """A JSON scalar as a float8 (a boolean as 0/1, as Python's json read it), else NULL."""
    return (
        f"CASE jsonb_typeof({path}) WHEN 'number' THEN ({path})::float8 "
        f"WHEN 'boolean' THEN ({path})::boolean::int::float8 END"
    )


class _Decompressed(Func):
    """The JSON column decompressed into a new value (one decompression per row)."""

    template = "(%(expressions)s || '{}'::jsonb)"
    output_field = JSONField()


def _point_rows_plain(runs: QuerySet[Run], fields: list[str]) -> list[dict[str, Any]]:
    """point_rows on a database without jsonb (SQLite): each scalar through the ORM."""
    parts = {
        f"band_{m}_{p}": KeyTransform(p, KeyTransform(key, "summary"))
        for m, key in _SUMMARY_METRIC.items()
        for p in _BAND
    }
    rows = list(runs.values(*fields, **parts))
    for row in rows:
        row["summary"] = {
            key: {p: _plain(row.pop(f"band_{m}_{p}")) for p in _BAND}
            for m, key in _SUMMARY_METRIC.items()
        }
    return rows


def _plain(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


_BAND = ("p10", "p90")


def run_band(run: dict[str, Any], metric: str) -> dict[str, float] | None:
    """The spread of one run's samples (p10–p90) from its summary; None when not recorded."""
    stats = (run.get("summary") or {}).get(_SUMMARY_METRIC[metric])
    if not isinstance(stats, dict):
        return None
    low, high = stats.get("p10"), stats.get("p90")
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return None
    return {"low": float(low), "high": float(high)}


def errors_by_category(runs: QuerySet[Run]) -> list[dict[str, Any]]:
    """Error samples per category over the runs, read from each run's summary, most first."""
    tallies = runs.filter(error_count__gt=0).values_list(
        KeyTransform("errors_by_category", "summary"), flat=True
    )
    return tallied(tallies)


def tallied(tallies: Iterable[Any]) -> list[dict[str, Any]]:
    """Error samples per category summed over {category: count} tallies, most first (ties in
    the order the categories first appear); a tally that is not a dict, or a count that is
    not an int, is left out."""
    counts: Counter[str] = Counter()
    for categories in tallies:
        if isinstance(categories, dict):
            for category, count in categories.items():
                if isinstance(count, int):
                    counts[category] += count
    return [{"category": c, "count": n} for c, n in counts.most_common()]
