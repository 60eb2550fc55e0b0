"""Retention: raw samples go once their run's slot is older than TOKSPEED_SAMPLE_RETENTION_DAYS.

Runs (with their summaries: medians, counts, error tallies) and rollups are kept forever, so
every board, history chart and alert baseline still has them; only the per-request rows go.
Deletes run in batches, each its own short transaction, so writers are never held up long; on
PostgreSQL, months wholly past the cutoff are dropped as partitions first (benchmarks/partitions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings

from . import partitions
from .models import Sample

BATCH_SIZE = 10_000


@dataclass
class RetentionReport:
    cutoff: datetime | None  # samples of runs slotted before this are gone; None: kept forever
    deleted: int = 0
    batches: int = 0
    dropped_partitions: list[str] = field(default_factory=list)


def sample_cutoff(now: datetime) -> datetime | None:
    """The oldest slot whose samples are kept; None when retention is off (0 days)."""
    days = settings.TOKSPEED_SAMPLE_RETENTION_DAYS
    return now - timedelta(days=days) if days > 0 else None


def expire_samples(*, now: datetime, batch_size: int = BATCH_SIZE) -> RetentionReport:
    """Delete the samples of runs slotted before the cutoff; never a run row."""
    report = RetentionReport(cutoff=sample_cutoff(now))
    if report.cutoff is None:
        return report
    # Partitioned (PostgreSQL): whole months go at once; the month the cutoff falls in, and
    # the default partition, lose their old rows batch by batch below.
    report.dropped_partitions = partitions.drop_months_before(report.cutoff)
    old = Sample.objects.filter(slot__lt=report.cutoff)
    while True:
        ids = list(old.order_by().values_list("id", flat=True)[:batch_size])
        if not ids:
            return report
        # slot repeated so that, partitioned, the delete touches only the old months.
        deleted, _ = Sample.objects.filter(id__in=ids, slot__lt=report.cutoff).delete()
        report.deleted += deleted
        report.batches += 1
