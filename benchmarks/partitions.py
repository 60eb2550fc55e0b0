"""Monthly partitions of the samples table on PostgreSQL (declarative, RANGE on `slot`).

Migration 0015 turns benchmarks_sample into a partitioned table: one partition per UTC month of
the run's slot, plus a default partition that catches any month not created yet. Beat creates
the coming months ahead (`ensure_months`); retention drops a month whole once all of it is past
the cutoff (`drop_months_before`): instant, no row-by-row delete, no table bloat. A query with a
slot range reads only the months it covers. On SQLite (`make run`) nothing here applies.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.db import connection, transaction

TABLE = "benchmarks_sample"
DEFAULT = f"{TABLE}_default"
MONTHS_AHEAD = 3
_NAME = re.compile(rf"^{TABLE}_y(\d{{4}})m(\d{{2}})$")


def month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, 1, tzinfo=UTC)


def add_months(month: datetime, count: int) -> datetime:
    index = month.year * 12 + month.month - 1 + count
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def partition_name(month: datetime) -> str:
    return f"{TABLE}_y{month.year:04d}m{month.month:02d}"


def is_partitioned() -> bool:
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT relkind FROM pg_class WHERE relname = %s", [TABLE])
        row = cursor.fetchone()
    return bool(row) and row[0] == "p"


def months() -> dict[str, datetime]:
    """Existing month partitions: name → first instant of the month."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = %s",
            [TABLE],
        )
        names = [name for (name,) in cursor.fetchall()]
    found = {}
    for name in names:
        if match := _NAME.match(name):
            found[name] = datetime(int(match[1]), int(match[2]), 1, tzinfo=UTC)
    return found


def ensure_months(*, now: datetime, ahead: int = MONTHS_AHEAD) -> list[str]:
    """Create the partitions of this month and the next `ahead`; returns those created.

    Rows of a new month that already landed in the default partition move into it first
    (PostgreSQL refuses to attach a range the default partition holds rows of).
    """
    if not is_partitioned():
        return []
    have = months()
    created = []
    first = month_start(now)
    for step in range(ahead + 1):
        month = add_months(first, step)
        name = partition_name(month)
        if name not in have:
            _attach(name, month, add_months(month, 1))
            created.append(name)
    return created


def drop_months_before(cutoff: datetime) -> list[str]:
    """Drop every month partition that ends at or before `cutoff`; returns their names."""
    if not is_partitioned():
        return []
    dropped = []
    for name, month in sorted(months().items(), key=lambda item: item[1]):
        if add_months(month, 1) <= cutoff:
            with connection.cursor() as cursor:
                cursor.execute(f'DROP TABLE "{name}"')  # name matched _NAME: no quoting issue
            dropped.append(name)
    return dropped


def _attach(name: str, start: datetime, end: datetime) -> None:
    bounds = f"FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            [TABLE],
        )
        (columns,) = cursor.fetchone()
        # Names and bounds are built here from dates, never from input.
        cursor.execute(f'CREATE TABLE "{name}" (LIKE "{TABLE}" INCLUDING CONSTRAINTS)')
        cursor.execute(
            f'WITH moved AS (DELETE FROM "{DEFAULT}" WHERE slot >= %s AND slot < %s '  # noqa: S608
            f'RETURNING {columns}) INSERT INTO "{name}" ({columns}) SELECT {columns} FROM moved',
            [start, end],
        )
        cursor.execute(f'ALTER TABLE "{TABLE}" ATTACH PARTITION "{name}" FOR VALUES {bounds}')
