"""Writing the materialized long-window board (selectors.materialized has the rule): one
endpoint's rows when a run of it is counted, every endpoint's once a day."""

import json
import logging
from collections.abc import Iterable, Iterator
from datetime import date
from typing import Any

from django.db import transaction
from django.utils import timezone

from providers.models import Endpoint

from ..models import BoardFigures, BoardFiguresDay, Vantage
from .board_figures import stored_figures
from .filters import SKETCHED_WINDOW_HOURS, BoardFilters
from .leaderboard import sketched_parts
from .materialized import ALL, EVERY_BUCKET, covered, filter_key, signature
from .scope import Workloads

log = logging.getLogger(__name__)

# Endpoints written per transaction by the daily write (their locks are held that long).
CHUNK = 50


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
    mark = signature(Workloads.load())
    for vantage in Vantage.objects.order_by("id"):
        done = BoardFiguresDay.objects.filter(vantage=vantage, day=today, signature=mark)
        if not force and done.exists():
            continue
        for start in range(0, len(ids), CHUNK):
            with transaction.atomic():
                chunk = ids[start : start + CHUNK]
                lock(chunk)
                written += _replace(vantage, chunk)
        with transaction.atomic():
            BoardFiguresDay.objects.filter(vantage=vantage).delete()
            if timezone.now().date() == today:
                BoardFiguresDay.objects.create(vantage=vantage, day=today, signature=mark)
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
                for endpoint_id, figures in stored_figures(
                    stats, by_concurrency, prefill, texts=True
                ).items():
                    yield BoardFigures(
                        vantage=vantage,
                        day=today,
                        days=hours // 24,
                        tod_bucket=ALL if bucket is None else bucket,
                        filter_key=filter_key(filters.workload, filters.concurrency),
                        endpoint_id=endpoint_id,
                        # As the JSON field wrote them (no NaN: a failed write, merged).
                        figures=json.dumps(figures[:-1], allow_nan=False),
                        text=figures[-1],
                    )
