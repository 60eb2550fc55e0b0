"""The materialized long-window board: each endpoint's final figures, merged once.

A long-window board (30 d, 90 d, 365 d) merges rollup sketches on every read (rollups.read).
This store keeps the result of that merge per (vantage, UTC day, window, time-of-day bucket or
all day, filter, endpoint), so a covered board is one indexed read of N rows with no merge.
Read here, written by selectors.materialized_write. The rule (docs/design.md §5, "The
materialized board"):

- a run's worker rewrites its endpoint's rows for today in the transaction that counts the run
  into the rollups, holding a lock on the endpoint row (so two runs of one endpoint write in
  turn, each after the other's rollups are committed);
- once a UTC day (the window-rollups beat task, after the window rollups) every endpoint's rows
  are written, a chunk of endpoints at a time under the same locks, and then the day's
  BoardFiguresDay row for the vantage, which is what lets a board read them;
- a board reads them only when its filter is covered (covered(): the default board, each
  standard workload, each standard concurrency; no explicit since/until) and today's
  BoardFiguresDay exists for the workloads as they are now (its signature); otherwise, or
  when none of the rows exist, it merges the rollups as before. A failed write drops the
  day's BoardFiguresDay (boards merge again until the next daily write), and a rollup rebuild
  drops every row.
"""

import hashlib
import json
from typing import Any

from django.db import connections
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from ..buckets import BUCKETS
from ..models import BoardFigures, BoardFiguresDay, Vantage
from .filters import PEAK, BoardFilters
from .scope import Workloads

ALL = BoardFigures.ALL_BUCKETS
# Standard concurrencies a board can be filtered by without a workload.
CONCURRENCIES: tuple[int | str, ...] = (1, 10, PEAK)
EVERY_BUCKET: tuple[int | None, ...] = (None, *BUCKETS)

# Bumped when what a row stores changes: rows of another format are not read (signature).
FORMAT = 2


def filter_key(workload: str | None, concurrency: int | str | None) -> str:
    return f"{workload or ''}|{'' if concurrency is None else concurrency}"


def covered(workloads: Workloads) -> list[tuple[str | None, int | str | None]]:
    """(workload, concurrency) of every filter the store holds."""
    return [
        (None, None),
        *((w.slug, None) for w in workloads.standard()),
        *((None, c) for c in CONCURRENCIES),
    ]


def signature(workloads: Workloads) -> str:
    """What the rows depend on besides the rollups: every workload's shape (which is the base,
    the long-context and the base-context ones; which filters are covered)."""
    shapes = sorted(
        (w.id, w.slug, w.concurrency, w.context_tokens, w.custom) for w in workloads.items
    )
    return hashlib.sha256(repr((FORMAT, shapes)).encode()).hexdigest()


def read(
    filters: BoardFilters, *, vantage: Vantage | None, workloads: Workloads, texts: bool = False
) -> dict[int, list[Any]] | None:
    """Each endpoint's figures as selectors.board_figures.stored_figures gives them from the
    merge, or None: not covered, not written for today and these workloads (merge instead).
    With `texts`, each list ends with its figures' JSON text as the write side stored it (the
    API's compact answer splices it in); without, it ends with the tokens."""
    if vantage is None or not _covers(filters, workloads):
        return None
    connection = connections[BoardFigures.objects.db]
    if connection.vendor == "postgresql":
        # A constant statement (the board's hot path): no queryset to build and compile.
        with connection.cursor() as cursor:
            cursor.execute(
                _WITH_TEXTS_SQL if texts else _NUMBERS_SQL, _params(filters, vantage, workloads)
            )
            found = cursor.fetchall()
    else:
        rows = _rows(filters, vantage=vantage, workloads=workloads)
        found = list(rows.values_list("endpoint_id", "figures", *(("text",) if texts else ())))
    if not found:
        return None  # nothing written (or no data at all: the merge is as cheap)
    columns = list(zip(*found, strict=True))
    # Every row's figures parsed in one call (a call per row cost twice as much).
    parsed = json.loads(f"[{','.join(columns[1])}]")
    if texts:
        for figures, text in zip(parsed, columns[2], strict=True):
            figures.append(text)
    return dict(zip(columns[0], parsed, strict=True))


def _covers(filters: BoardFilters, workloads: Workloads) -> bool:
    """Whether the store holds this board (otherwise it is merged)."""
    return filters.sketched and (filters.workload, filters.concurrency) in covered(workloads)


def _params(filters: BoardFilters, vantage: Vantage, workloads: Workloads) -> list[Any]:
    """The values that pick a covered board's rows for today (_rows, _FROM_SQL)."""
    return [
        vantage.id,
        timezone.now().date(),
        filters.window_hours // 24,
        ALL if filters.tod_bucket is None else filters.tod_bucket,
        filter_key(filters.workload, filters.concurrency),
        signature(workloads),
    ]


def _rows(
    filters: BoardFilters, *, vantage: Vantage, workloads: Workloads
) -> QuerySet[BoardFigures]:
    """The stored rows of a covered board (_covers) for today."""
    vantage_id, today, days, tod_bucket, key, workloads_signature = _params(
        filters, vantage, workloads
    )
    day = BoardFiguresDay.objects.filter(
        vantage=OuterRef("vantage"), day=OuterRef("day"), signature=workloads_signature
    )
    return BoardFigures.objects.filter(
        Exists(day),
        vantage_id=vantage_id,
        day=today,
        days=days,
        tod_bucket=tod_bucket,
        filter_key=key,
    )


_FROM_SQL = f"""
FROM {BoardFigures._meta.db_table} AS f
WHERE f.vantage_id = %s AND f.day = %s AND f.days = %s AND f.tod_bucket = %s
  AND f.filter_key = %s
  AND EXISTS (
    SELECT 1 FROM {BoardFiguresDay._meta.db_table} AS d
    WHERE d.vantage_id = f.vantage_id AND d.day = f.day AND d.signature = %s
  )
"""  # noqa: S608  (table names from the models; the values are parameters)
_NUMBERS_SQL = f"SELECT f.endpoint_id, f.figures {_FROM_SQL}"
_WITH_TEXTS_SQL = f"SELECT f.endpoint_id, f.figures, f.text {_FROM_SQL}"
