"""Writing the short windows' board (selectors.window_figures has the rule): an endpoint's rows
when a run of it is counted, expired or missing ones by the beat task, all of them on a rebuild.

Each row is computed by the exact read restricted to its endpoints (leaderboard.exact_figures,
the same statements a board read runs), back from the moment the writer holds their locks."""

import json
import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, Min, Q
from django.utils import timezone

from providers.models import Endpoint

from ..models import Run, Vantage, WindowFigures
from .filters import BoardFilters
from .leaderboard import exact_figures
from .materialized import EVERY_BUCKET, covered, filter_key, signature
from .materialized_write import lock
from .scope import Workloads, since
from .window_figures import ALL, HOURS

log = logging.getLogger(__name__)

# Endpoints written per transaction by the beat task (their locks are held that long).
CHUNK = 50


def write_endpoint(endpoint_id: int, vantage_id: int, slot: datetime) -> None:
    """Rewrite the rows of one endpoint that a run of it at `slot` moves: all day's and the
    buckets of that slot's runs (a long-context run's prefill pairs with its slot's base run,
    whatever that one's bucket). The caller holds its lock(), in the transaction that counts
    the run. On failure, the endpoint's rows are dropped (reads compute it)."""
    try:
        with transaction.atomic():
            vantage = Vantage.objects.get(id=vantage_id)
            same_slot = Run.objects.filter(endpoint_id=endpoint_id, vantage=vantage, slot=slot)
            buckets = sorted(set(same_slot.values_list("tod_bucket", flat=True)))
            _replace(vantage, [endpoint_id], buckets=[None, *buckets])
    except Exception:
        log.exception("window figures of endpoint %s: not written; reads compute it", endpoint_id)
        drop_endpoint(endpoint_id, vantage_id)


def drop_endpoint(endpoint_id: int, vantage_id: int) -> None:
    """Forget one endpoint's rows of a vantage (a change its writer did not see: reads compute
    it until the beat task writes it again)."""
    WindowFigures.objects.filter(endpoint_id=endpoint_id, vantage_id=vantage_id).delete()


def drop() -> None:
    """Forget every row."""
    WindowFigures.objects.all().delete()


def refresh(*, force: bool = False) -> int:
    """Write the rows that are expired, missing or of other workloads (every row with
    `force`), a chunk of endpoints at a time under their locks; rows written."""
    written = 0
    ids = list(Endpoint.objects.order_by("id").values_list("id", flat=True))
    for vantage in Vantage.objects.order_by("id"):
        stale = (
            {(hours, bucket): ids for hours in HOURS for bucket in EVERY_BUCKET}
            if force
            else _stale(vantage, ids)
        )
        for (hours, bucket), endpoint_ids in stale.items():
            for start in range(0, len(endpoint_ids), CHUNK):
                with transaction.atomic():
                    chunk = endpoint_ids[start : start + CHUNK]
                    lock(chunk)
                    written += _replace(vantage, chunk, buckets=[bucket], hours=(hours,))
    return written


def rebuild(now: datetime | None = None) -> int:
    """The derived store's rebuild (benchmarks.derived): every row again."""
    drop()
    return refresh(force=True)


def _stale(vantage: Vantage, ids: list[int]) -> dict[tuple[int, int | None], list[int]]:
    """Per window and bucket (None: all day), the endpoints with a row of it not exact now
    (or none)."""
    now = timezone.now()
    workloads = Workloads.load()
    expected = len(covered(workloads))
    exact = Q(signature=signature(workloads), written_at__lte=now) & (
        Q(exact_until__isnull=True) | Q(exact_until__gte=now)
    )
    fresh = {
        (row["endpoint_id"], row["hours"], row["tod_bucket"])
        for row in WindowFigures.objects.filter(vantage=vantage)
        .values("endpoint_id", "hours", "tod_bucket")
        .annotate(exact=Count("id", filter=exact))
        .filter(exact=expected)
    }
    stale = {}
    for hours in HOURS:
        for bucket in EVERY_BUCKET:
            key = ALL if bucket is None else bucket
            if need := [i for i in ids if (i, hours, key) not in fresh]:
                stale[hours, bucket] = need
    return stale


def _replace(
    vantage: Vantage,
    endpoint_ids: list[int],
    *,
    buckets: Iterable[int | None],
    hours: tuple[int, ...] = HOURS,
) -> int:
    """Compute and replace these endpoints' rows of these windows and buckets, back from
    now."""
    now = timezone.now()
    buckets = list(buckets)
    objects = list(_figures(vantage, endpoint_ids, buckets, hours, now))
    WindowFigures.objects.filter(
        vantage=vantage,
        endpoint_id__in=endpoint_ids,
        hours__in=hours,
        tod_bucket__in=[ALL if b is None else b for b in buckets],
    ).delete()
    WindowFigures.objects.bulk_create(objects, batch_size=1_000)
    return len(objects)


def _figures(
    vantage: Vantage,
    endpoint_ids: list[int],
    buckets: list[int | None],
    windows: tuple[int, ...],
    now: datetime,
) -> Iterable[WindowFigures]:
    workloads = Workloads.load()
    mark = signature(workloads)
    pairs = covered(workloads)
    for hours in windows:
        for bucket in buckets:
            until = _exact_until(vantage, endpoint_ids, bucket, hours, now)
            for workload, concurrency in pairs:
                filters = BoardFilters(
                    workload=workload,
                    concurrency=concurrency,
                    tod_bucket=bucket,
                    window_hours=hours,
                )
                found = exact_figures(
                    filters,
                    vantage=vantage,
                    endpoint_ids=endpoint_ids,
                    workloads=workloads,
                    now=now,
                    texts=True,
                )
                for endpoint_id in endpoint_ids:
                    yield WindowFigures(
                        vantage=vantage,
                        hours=hours,
                        tod_bucket=ALL if bucket is None else bucket,
                        filter_key=filter_key(workload, concurrency),
                        endpoint_id=endpoint_id,
                        signature=mark,
                        written_at=now,
                        exact_until=until.get(endpoint_id),
                        figures=json.dumps(found.get(endpoint_id, [])),
                    )


def _exact_until(
    vantage: Vantage, endpoint_ids: list[int], bucket: int | None, hours: int, now: datetime
) -> dict[int, datetime]:
    """Per endpoint with a run in the window (of the bucket): when the oldest of them leaves
    it. Any run, counted or not (queued, skipped, downgraded; a base run paired with a
    long-context one of the bucket has its slot): the row may expire early, never late."""
    runs = Run.objects.filter(
        vantage=vantage, endpoint_id__in=endpoint_ids, slot__gte=since(hours, now=now)
    )
    if bucket is not None:
        runs = runs.filter(tod_bucket=bucket)
    oldest = runs.order_by().values("endpoint_id").annotate(oldest=Min("slot"))
    return {row["endpoint_id"]: row["oldest"] + timedelta(hours=hours) for row in oldest}
