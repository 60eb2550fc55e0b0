"""What the advisor stands on: per endpoint, its finished runs as rows of FIELDS (float64).

Only run summaries are read (never samples): the medians are columns, the within-run p90 TTFT
and p10 decode speed come out of the summary JSON. The advice reads them from the run digest
(advisor.digest, one packed row per endpoint-day); `load_points` reads the runs directly — the
reference the digest is checked against, and what tests and the back-test build by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass
from datetime import datetime, timedelta

import numpy as np
from django.db.models import FloatField, Q
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from benchmarks.models import Run, Vantage, Workload

WINDOW_DAYS = 14
# Columns of a run row; times in ms, decode speed in output tokens/s per user, slot in epoch
# seconds, NaN where a run has no figure.
FIELDS = (
    "slot",
    "tod_bucket",
    "context_tokens",
    "concurrency",
    "input_tokens",
    "ok",
    "errors",
    "ttft_p50_ms",
    "ttft_p90_ms",
    "decode_tps_p50",
    "decode_tps_p10",
    "saturated",
)
# saturated: the run's saturated_count (its samples whose client fell behind, docs/design.md §4).
(SLOT, BUCKET, CONTEXT, USERS, TOKENS, OK, ERRORS, TTFT50, TTFT90, DECODE50, DECODE10) = range(11)
SATURATED = 11


@dataclass(frozen=True, slots=True)
class RunPoint:
    """One finished run: medians over its ok samples and its within-run spread (a row of
    FIELDS, for building by hand)."""

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
    saturated_count: int = 0


# A run's columns in RunPoint's order (values_list arguments).
POINT_COLUMNS = (
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
    "saturated_count",
)


def as_rows(points: Sequence[RunPoint]) -> np.ndarray:
    """RunPoints as rows of FIELDS (None → NaN), in the given order."""
    rows = np.full((len(points), len(FIELDS)), np.nan)
    for i, point in enumerate(points):
        values = astuple(point)
        rows[i] = [point.slot.timestamp(), *(np.nan if v is None else v for v in values[1:])]
    return rows


def load_columns(
    owner: np.ndarray, records: np.ndarray, *, start: datetime, now: datetime
) -> dict[int, np.ndarray]:
    """Split rows (grouped by endpoint, oldest first within each) by their endpoint, keeping
    those with start ≤ slot ≤ now: each endpoint's kept rows are one run of its rows, so each
    comes out as a view of `records` (no copy, no sort)."""
    if not len(owner):
        return {}
    slot = records[:, SLOT]
    first = np.flatnonzero(np.append(True, owner[1:] != owner[:-1]))
    early = np.add.reduceat(slot < start.timestamp(), first)
    kept = np.add.reduceat((slot >= start.timestamp()) & (slot <= now.timestamp()), first)
    lows = (first + early).tolist()
    return {
        int(e): records[low : low + n]
        for e, low, n in zip(owner[first].tolist(), lows, kept.tolist(), strict=True)
        if n
    }


def load_points(
    *,
    endpoint_ids: Iterable[int],
    vantage: Vantage | None,
    now: datetime,
    days: int = WINDOW_DAYS,
    workload: Workload | None = None,
) -> dict[int, np.ndarray]:
    """Finished runs of the endpoints from the vantage in the last `days`, oldest first, read
    from the runs themselves; a downgraded run (served below its lane) is left out. The runs of
    the standard workloads, or with `workload` (a custom one) that workload's runs only."""
    ids = list(endpoint_ids)
    if not ids or vantage is None:
        return {}
    start = now - timedelta(days=days)
    rows = list(
        Run.objects.filter(
            endpoint_id__in=ids,
            vantage=vantage,
            slot__gte=start,
            slot__lte=now,
            status__in=Run.FINISHED,
            downgraded=False,  # served below its lane: not that lane's speed (providers.lanes)
        )
        .filter(Q(workload=workload) if workload is not None else Q(workload__custom=False))
        .order_by("endpoint_id", "slot", "id")
        .values_list("endpoint_id", *POINT_COLUMNS)
    )
    if not rows:
        return {}
    owner = np.asarray([row[0] for row in rows])
    records = as_rows([RunPoint(*row[1:]) for row in rows])
    return load_columns(owner, records, start=start, now=now)
