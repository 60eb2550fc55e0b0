"""The materialized long-window board: each endpoint's final figures, merged once.

A long-window board (30 d, 90 d, 365 d) merges rollup sketches on every read (rollups.read).
This store keeps the result of that merge per (vantage, UTC day, window, time-of-day bucket or
all day, filter, endpoint), so a covered board is one indexed read of N rows with no merge.
The rule (docs/design.md §5, "The materialized board"):

- a run's worker rewrites its endpoint's rows for today in the transaction that counts the run
  into the rollups, holding a lock on the endpoint row (so two runs of one endpoint write in
  turn, each after the other's rollups are committed);
- once a UTC day (the window-rollups beat task, after the window rollups) every endpoint's rows
  are written, a chunk of endpoints at a time under the same locks, and then the day's
  BoardFiguresDay row for the vantage, which is what lets a board read them;
- a board reads them only when its filter is covered (COVERED: the default board, each
  standard workload, each standard concurrency; no explicit since/until) and today's
  BoardFiguresDay exists; otherwise, or when none of the rows exist, it merges the rollups as
  before. A failed write drops the day's BoardFiguresDay (boards merge again until the next
  daily write), and a rollup rebuild drops every row.
"""

import logging
from collections.abc import Iterable, Iterator
from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from providers.models import Endpoint

from ..buckets import BUCKETS
from ..models import BoardFigures, BoardFiguresDay, Vantage
from .filters import PEAK, SKETCHED_WINDOW_HOURS, BoardFilters
from .scope import Workloads

log = logging.getLogger(__name__)

ALL = BoardFigures.ALL_BUCKETS
# Standard concurrencies a board can be filtered by without a workload.
CONCURRENCIES: tuple[int | str, ...] = (1, 10, PEAK)
EVERY_BUCKET: tuple[int | None, ...] = (None, *BUCKETS)
# Endpoints written per transaction by the daily write (their locks are held that long).
CHUNK = 50

Parts = tuple[dict[int, Any], dict[int, Any], dict[int, Any]]


def filter_key(workload: str | None, concurrency: int | str | None) -> str:
    return f"{workload or ''}|{'' if concurrency is None else concurrency}"


def covered(workloads: Workloads) -> list[tuple[str | None, int | str | None]]:
    """(workload, concurrency) of every filter the store holds."""
    return [
        (None, None),
        *((w.slug, None) for w in workloads.standard()),
        *((None, c) for c in CONCURRENCIES),
    ]


def read(filters: BoardFilters, *, vantage: Vantage | None, workloads: Workloads) -> Parts | None:
    """(stats, by_concurrency, prefill) as the merge would give them, or None: not covered,
    not written for today (merge instead)."""
    if vantage is None or not filters.sketched:
        return None
    if (filters.workload, filters.concurrency) not in covered(workloads):
        return None
    today = timezone.now().date()
    day = BoardFiguresDay.objects.filter(vantage=OuterRef("vantage"), day=OuterRef("day"))
    rows = BoardFigures.objects.filter(
        Exists(day),
        vantage=vantage,
        day=today,
        days=filters.window_hours // 24,
        tod_bucket=ALL if filters.tod_bucket is None else filters.tod_bucket,
        filter_key=filter_key(filters.workload, filters.concurrency),
    ).values_list("endpoint_id", "figures")
    stats: dict[int, Any] = {}
    by_concurrency: dict[int, Any] = {}
    prefill: dict[int, Any] = {}
    for endpoint_id, figures in rows:
        for part, into in (("stats", stats), ("concurrency", by_concurrency), ("prefill", prefill)):
            if part in figures:
                into[endpoint_id] = figures[part]
    if not (stats or by_concurrency or prefill):
        return None  # nothing written (or no data at all: the merge is as cheap)
    return stats, by_concurrency, prefill


def lock(endpoint_ids: Iterable[int]) -> None:
    """Hold these endpoints' rows until the transaction ends (the store's writers take turns;
    NO KEY: inserting a run that references an endpoint is not blocked)."""
    ids = sorted(set(endpoint_ids))
    list(
        Endpoint.objects.select_for_update(no_key=True)
        .filter(id__in=ids)
        .order_by("id")
        .values_list("id", flat=True)
    )


def write_endpoint(endpoint_id: int, vantage_id: int, tod_bucket: int) -> None:
    """Rewrite one endpoint's rows for today that a run of this time-of-day bucket moves: its
    bucket's and all day's (the caller holds its lock(), in the transaction that changed its
    rollups). On failure, today's rows of the vantage stop being read."""
    try:
        with transaction.atomic():
            vantage = Vantage.objects.get(id=vantage_id)
            _replace(vantage, [endpoint_id], buckets=(None, tod_bucket))
    except Exception:
        log.exception("board figures of endpoint %s: not written; boards merge", endpoint_id)
        BoardFiguresDay.objects.filter(vantage_id=vantage_id).delete()


def refresh(*, force: bool = False) -> int:
    """Write every endpoint's rows for today, then mark the day written (unless it already
    is); rows written."""
    today = timezone.now().date()
    written = 0
    ids = list(Endpoint.objects.order_by("id").values_list("id", flat=True))
    for vantage in Vantage.objects.order_by("id"):
        if not force and BoardFiguresDay.objects.filter(vantage=vantage, day=today).exists():
            continue
        for start in range(0, len(ids), CHUNK):
            with transaction.atomic():
                chunk = ids[start : start + CHUNK]
                lock(chunk)
                written += _replace(vantage, chunk)
        with transaction.atomic():
            BoardFiguresDay.objects.filter(vantage=vantage).delete()
            if timezone.now().date() == today:
                BoardFiguresDay.objects.create(vantage=vantage, day=today)
            BoardFigures.objects.filter(vantage=vantage, day__lt=today).delete()
    return written


def drop() -> None:
    """Forget every row (the rollups they were merged from are being rewritten)."""
    BoardFiguresDay.objects.all().delete()
    BoardFigures.objects.all().delete()


def rebuild(now: Any = None) -> int:
    """The derived store's rebuild (benchmarks.derived): every row again."""
    drop()
    return refresh(force=True)


def _replace(
    vantage: Vantage, endpoint_ids: list[int], *, buckets: tuple[int | None, ...] = EVERY_BUCKET
) -> int:
    today = timezone.now().date()
    objects = list(_figures(vantage, endpoint_ids, today, buckets))
    ours = BoardFigures.objects.filter(vantage=vantage, endpoint_id__in=endpoint_ids)
    ours.filter(day__lt=today).delete()
    ours.filter(tod_bucket__in=[ALL if b is None else b for b in buckets]).delete()
    if timezone.now().date() != today:
        return 0  # midnight passed while merging: these figures are yesterday's
    BoardFigures.objects.bulk_create(objects, batch_size=1_000)
    return len(objects)


def _figures(
    vantage: Vantage, endpoint_ids: list[int], today: date, buckets: tuple[int | None, ...]
) -> Iterator[BoardFigures]:
    from .leaderboard import sketched_parts  # the leaderboard reads this module

    pairs = covered(Workloads.load())
    for hours in sorted(SKETCHED_WINDOW_HOURS):
        for bucket in buckets:
            several = [
                BoardFilters(workload=w, concurrency=c, tod_bucket=bucket, window_hours=hours)
                for w, c in pairs
            ]
            parts = sketched_parts(
                several,
                vantage=vantage,
                window_hours=hours,
                tod_bucket=bucket,
                endpoint_ids=endpoint_ids,
            )
            for filters, (stats, by_concurrency, prefill) in parts.items():
                for endpoint_id in stats.keys() | by_concurrency.keys() | prefill.keys():
                    figures = {
                        name: part[endpoint_id]
                        for name, part in (
                            ("stats", stats),
                            ("concurrency", by_concurrency),
                            ("prefill", prefill),
                        )
                        if endpoint_id in part
                    }
                    yield BoardFigures(
                        vantage=vantage,
                        day=today,
                        days=hours // 24,
                        tod_bucket=ALL if bucket is None else bucket,
                        filter_key=filter_key(filters.workload, filters.concurrency),
                        endpoint_id=endpoint_id,
                        figures=figures,
                    )
