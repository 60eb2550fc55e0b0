"""The daily change-point pass: where a series' level moved, for chart annotations.

PELT (ruptures) over the per-run medians of each series (Run summaries, log scale, time-of-day
profile removed), within each stretch of one client version. It never emails anyone: alerts
come from evaluate.py; this is the after-the-fact history that the endpoint charts annotate.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerts.config import detector_config
from alerts.detection.rules import SPEED_METRICS
from alerts.lifecycle.series import RUN_MEDIAN, SUMMARIZED, SeriesKey, series_runs
from alerts.models import ChangePoint
from benchmarks.models import Run

MIN_SIZE = 3  # runs on each side of a change
MIN_RUNS = 2 * MIN_SIZE + 2
PENALTY_FACTOR = 3.0  # × σ² × log n: BIC-like, a little stricter


def noise_sigma(x: np.ndarray) -> float:
    """Robust σ of the noise: MAD of first differences (a level step barely moves it)."""
    diffs = np.diff(x)
    if len(diffs) == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(diffs - np.median(diffs))) / math.sqrt(2))


def find_breaks(values: np.ndarray, buckets: np.ndarray) -> list[int]:
    """Indices where a new level starts (positive, < len), for run medians in time order."""
    logs = np.log(values)
    residual = logs.copy()
    for bucket in np.unique(buckets):
        mask = buckets == bucket
        residual[mask] -= np.median(logs[mask])
    sigma = noise_sigma(residual)
    if len(residual) < MIN_RUNS or sigma == 0:
        return []
    penalty = PENALTY_FACTOR * sigma**2 * math.log(len(residual))
    import ruptures as rpt  # with scipy.signal: seconds of start-up for a nightly task

    algo = rpt.Pelt(model="l2", min_size=MIN_SIZE, jump=1).fit(residual.reshape(-1, 1))
    return [b for b in algo.predict(pen=penalty) if b < len(residual)]


def detect_series(key: SeriesKey, *, since: datetime, until: datetime) -> int:
    """Replace the series' change points within [since, until]; returns how many were found."""
    rule = detector_config().rules[key.metric]
    column = RUN_MEDIAN[key.metric]
    rows = list(
        series_runs(key)
        .filter(slot__gte=since, slot__lte=until, **{f"{column}__gt": 0})
        .order_by("slot")
        .values_list("slot", "tod_bucket", column, "client_version")
    )
    found = []
    start = 0
    for end in range(1, len(rows) + 1):
        if end < len(rows) and rows[end][3] == rows[start][3]:
            continue
        stretch = rows[start:end]  # one client version: a new version is a new history
        values = np.array([r[2] for r in stretch], dtype=float)
        buckets = np.array([r[1] for r in stretch], dtype=int)
        edges = [0, *find_breaks(values, buckets), len(stretch)]
        for before, at, after in zip(edges, edges[1:], edges[2:], strict=False):
            old = float(np.median(values[before:at]))
            new = float(np.median(values[at:after]))
            # Annotate what matters: at least half the alerting effect, either direction.
            if abs(rule.change(old, new)) >= rule.min_effect / 2:
                found.append((stretch[at][0], old, new))
        start = end
    with transaction.atomic():
        ChangePoint.objects.filter(**key.filter(), at__gte=since, at__lte=until).delete()
        ChangePoint.objects.bulk_create(
            ChangePoint(
                **key.filter(), at=at, before_median=old, after_median=new, change=new / old - 1
            )
            for at, old, new in found
        )
    return len(found)


def detect_all(*, now: datetime | None = None) -> tuple[int, int]:
    """Run the pass over every series with runs in the last ALERTS_CHANGEPOINT_DAYS days."""
    until = now or timezone.now()
    since = until - timedelta(days=settings.ALERTS_CHANGEPOINT_DAYS)
    triples = (
        Run.objects.filter(slot__gte=since, slot__lte=until, status__in=SUMMARIZED)
        .order_by()
        .values_list("endpoint_id", "workload_id", "vantage_id")
        .distinct()
    )
    analysed = stored = 0
    for endpoint_id, workload_id, vantage_id in triples:
        for metric in SPEED_METRICS:
            key = SeriesKey(endpoint_id, workload_id, vantage_id, metric)
            stored += detect_series(key, since=since, until=until)
            analysed += 1
    return analysed, stored
