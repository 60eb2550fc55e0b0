"""What the advisor stands on: one compact row per finished run, read in one query.

Only run summaries are read (never samples): the medians are columns, the within-run p90 TTFT
and p10 decode speed come out of the summary JSON inside the database.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import FloatField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from benchmarks.models import Run, Vantage

WINDOW_DAYS = 14


@dataclass(frozen=True, slots=True)
class RunPoint:
    """One finished run: medians over its ok samples and its within-run spread.

    Times in ms; decode speed in output tokens/s per user.
    """

    endpoint_id: int
    slot: datetime
    tod_bucket: int
    context_tokens: int
    concurrency: int
    input_tokens: int | None
    ok: int
    errors: int
    ttft_p50_ms: float | None
    ttft_p90_ms: float | None
    decode_tps_p50: float | None
    decode_tps_p10: float | None

    @property
    def base(self) -> bool:
        return self.context_tokens == 0 and self.concurrency == 1

    @property
    def long(self) -> bool:
        return self.context_tokens > 0 and self.concurrency == 1

    @property
    def parallel(self) -> bool:
        return self.context_tokens == 0 and self.concurrency > 1


def load_points(
    *, endpoint_ids: Iterable[int], vantage: Vantage | None, now: datetime, days: int = WINDOW_DAYS
) -> dict[int, list[RunPoint]]:
    """Finished runs of the endpoints from the vantage in the last `days`, oldest first."""
    ids = list(endpoint_ids)
    points: dict[int, list[RunPoint]] = defaultdict(list)
    if not ids or vantage is None:
        return points
    rows = (
        Run.objects.filter(
            endpoint_id__in=ids,
            vantage=vantage,
            slot__gte=now - timedelta(days=days),
            slot__lte=now,
            status__in=Run.FINISHED,
        )
        .order_by("slot")
        .values_list(
            "endpoint_id",
            "slot",
            "tod_bucket",
            "context_tokens",
            "concurrency",
            "input_tokens",
            "ok_count",
            "error_count",
            "ttft_p50_ms",
            Cast(KT("summary__ttft_ms__p90"), FloatField()),
            "decode_tps_p50",
            Cast(KT("summary__decode_tps__p10"), FloatField()),
        )
    )
    for row in rows:
        points[row[0]].append(RunPoint(*row))
    return points
