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

from django.db.models import Exists, OuterRef, QuerySet, TextField
from django.db.models.functions import Cast
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
    filters: BoardFilters, *, vantage: Vantage | None, workloads: Workloads
) -> dict[int, list[Any]] | None:
    """Each endpoint's figures as selectors.leaderboard.stored_figures gives them from the
    merge, or None: not covered, not written for today and these workloads (merge instead)."""
    rows = _rows(filters, vantage=vantage, workloads=workloads)
    if rows is None:
        return None
    ids, parsed = _parsed(rows, "figures")
    if not ids:
        return None  # nothing written (or no data at all: the merge is as cheap)
    return dict(zip(ids, parsed, strict=True))


def _rows(
    filters: BoardFilters, *, vantage: Vantage | None, workloads: Workloads
) -> QuerySet[BoardFigures] | None:
    """The stored rows of a covered filter for today, or None: not covered (merge instead)."""
    if vantage is None or not filters.sketched:
        return None
    if (filters.workload, filters.concurrency) not in covered(workloads):
        return None
    today = timezone.now().date()
    day = BoardFiguresDay.objects.filter(
        vantage=OuterRef("vantage"), day=OuterRef("day"), signature=signature(workloads)
    )
    return BoardFigures.objects.filter(
        Exists(day),
        vantage=vantage,
        day=today,
        days=filters.window_hours // 24,
        tod_bucket=ALL if filters.tod_bucket is None else filters.tod_bucket,
        filter_key=filter_key(filters.workload, filters.concurrency),
    )


def _parsed(rows: QuerySet[BoardFigures], figures: Any) -> tuple[tuple[int, ...], list[Any]]:
    """(endpoint ids, their `figures` expression's JSON) of `rows`. As text, parsed in one
    call: 400 rows through the JSON field's converter cost twice as much as the rest of the
    read."""
    texts = rows.annotate(text=Cast(figures, TextField())).values_list("endpoint_id", "text")
    ids, parts = zip(*texts, strict=True) if texts else ((), ())
    return ids, json.loads(f"[{','.join(parts)}]")
