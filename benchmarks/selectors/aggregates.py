"""Percentile aggregates that run inside the database on PostgreSQL and SQLite.

PostgreSQL has `percentile_cont(f) WITHIN GROUP (ORDER BY x)`; SQLite has no percentile, so the
same aggregate is registered there as a small Python aggregate on each connection. Both
interpolate linearly between the two nearest values, like numpy's default, and ignore NULLs.
"""

import json
import math
import sqlite3
from typing import Any

from django.db.models import Aggregate, Field, FloatField

SQLITE_FUNCTION = "tokspeed_percentile"
SQLITE_QUARTILES = "tokspeed_quartiles"
QUARTILES = (0.25, 0.5, 0.75)


def percentile(values: list[float], fraction: float) -> float | None:
    """Linear-interpolated percentile (0 ≤ fraction ≤ 1) of `values`; None when empty."""
    if not values:
        return None
    return _interpolate(sorted(values), fraction)


def quartiles(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """(p25, p50, p75) of `values` with one sort: the same figures as `Quartiles` in SQL."""
    if not values:
        return None, None, None
    ordered = sorted(values)
    low, mid, high = (_interpolate(ordered, fraction) for fraction in QUARTILES)
    return low, mid, high


def _interpolate(ordered: list[float], fraction: float) -> float:
    # The arithmetic of PostgreSQL's percentile_cont (lo + (hi − lo) × proportion), so Python
    # and SQL give the same float.
    position = fraction * (len(ordered) - 1)
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return float(ordered[low])
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))


class _SQLitePercentile:
    """SQLite aggregate: step(value, fraction) per row, finalize() -> percentile."""

    def __init__(self) -> None:
        self.values: list[float] = []
        self.fraction = 0.5

    def step(self, value: float | None, fraction: float) -> None:
        self.fraction = fraction
        if value is not None:
            self.values.append(value)

    def finalize(self) -> float | None:
        return percentile(self.values, self.fraction)


class _SQLiteQuartiles:
    """SQLite aggregate: p25, p50 and p75 as a JSON array text (NULL when no values)."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def step(self, value: float | None) -> None:
        if value is not None:
            self.values.append(value)

    def finalize(self) -> str | None:
        if not self.values:
            return None
        return json.dumps([percentile(self.values, f) for f in QUARTILES])


def register_sqlite(raw_connection: sqlite3.Connection) -> None:
    raw_connection.create_aggregate(SQLITE_FUNCTION, 2, _SQLitePercentile)
    raw_connection.create_aggregate(SQLITE_QUARTILES, 1, _SQLiteQuartiles)


class Percentile(Aggregate):
    """Continuous percentile of a numeric expression, e.g. `Percentile("ttft_p50_ms", 0.5)`."""

    function = "percentile_cont"
    name = "Percentile"
    output_field = FloatField()
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"

    def __init__(self, expression: Any, fraction: float, **extra: Any) -> None:
        fraction = float(fraction)
        if not 0.0 <= fraction <= 1.0:
            raise ValueError("fraction must be between 0 and 1")
        # A float we built ourselves, formatted by repr: safe to place in the SQL text.
        super().__init__(expression, fraction=repr(fraction), **extra)

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> tuple[str, list]:
        connection.ensure_connection()
        register_sqlite(connection.connection)
        return self.as_sql(
            compiler,
            connection,
            function=SQLITE_FUNCTION,
            template="%(function)s(%(expressions)s, %(fraction)s)",
            **extra_context,
        )


class Quartiles(Aggregate):
    """p25, p50 and p75 of an expression in one pass (one sort; the expression computed once).

    The database answers an array (PostgreSQL) or JSON text (SQLite): read it with `split()`.
    """

    function = "percentile_cont"
    name = "Quartiles"
    template = "%(function)s(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY %(expressions)s)"

    def __init__(self, expression: Any, **extra: Any) -> None:
        super().__init__(expression, output_field=Field(), **extra)

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> tuple[str, list]:
        connection.ensure_connection()
        register_sqlite(connection.connection)
        return self.as_sql(
            compiler,
            connection,
            function=SQLITE_QUARTILES,
            template="%(function)s(%(expressions)s)",
            **extra_context,
        )

    @staticmethod
    def split(value: Any) -> tuple[float | None, float | None, float | None]:
        """(p25, p50, p75) from what the database returned; Nones when there were no values."""
        if value is None:
            return None, None, None
        if isinstance(value, str):
            value = json.loads(value)
        low, mid, high = value
        return low, mid, high
