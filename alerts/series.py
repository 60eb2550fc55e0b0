"""Loading a series' windows from stored samples (the detector itself never touches the DB).

A series is endpoint × workload × vantage × metric. Its history restarts when the probe's
client version changes, when what a run sends changes (concurrency, context padding), and at an
accepted new baseline (Segment): samples from before any of these are never compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from benchmarks.models import Run, Sample
from benchmarks.stats import SPEEDLESS_OUTCOMES

from .detector import Window
from .models import Segment
from .rules import DetectorConfig

ENDED = Run.FINISHED  # the series holds runs whose summary is written


@dataclass(frozen=True, slots=True)
class SeriesKey:
    endpoint_id: int
    workload_id: int
    vantage_id: int
    metric: str

    @classmethod
    def of(cls, run: Run, metric: str) -> SeriesKey:
        return cls(run.endpoint_id, run.workload_id, run.vantage_id, metric)

    def filter(self) -> dict:
        return {
            "endpoint_id": self.endpoint_id,
            "workload_id": self.workload_id,
            "vantage_id": self.vantage_id,
            "metric": self.metric,
        }


@dataclass(frozen=True, slots=True)
class Bounds:
    """The windows of one evaluation: baseline (baseline_start, recent_start], recent
    (recent_start, end]; times are run slots."""

    baseline_start: datetime
    recent_start: datetime
    end: datetime
    segment_start: datetime | None


@dataclass(frozen=True, slots=True)
class SeriesData:
    key: SeriesKey
    bounds: Bounds
    baseline: Window
    recent: Window


def segment_start(key: SeriesKey, at: datetime) -> datetime | None:
    """Where the current segment of the series begins (an accepted new baseline), if anywhere."""
    return (
        Segment.objects.filter(**key.filter(), starts_at__lte=at)
        .order_by("-starts_at")
        .values_list("starts_at", flat=True)
        .first()
    )


def bounds_for(run: Run, key: SeriesKey, config: DetectorConfig) -> Bounds:
    recent_start = run.slot - timedelta(hours=config.recent_hours)
    baseline_start = recent_start - timedelta(days=config.baseline_days)
    start = segment_start(key, run.slot)
    if start is not None and start > baseline_start:
        # The step that was accepted is the first thing the new history contains.
        baseline_start = start - timedelta(microseconds=1)
    return Bounds(baseline_start, recent_start, run.slot, start)


def series_runs(of: Run | SeriesKey):
    """Finished runs of the endpoint × workload × vantage of a run or series key."""
    return Run.objects.filter(
        endpoint_id=of.endpoint_id,
        workload_id=of.workload_id,
        vantage_id=of.vantage_id,
        status__in=ENDED,
    )


def comparable_runs(run: Run):
    """Runs of the same series that measured the same thing the same way as `run`."""
    return series_runs(run).filter(
        client_version=run.client_version,
        concurrency=run.concurrency,
        context_tokens=run.context_tokens,
    )


def load(run: Run, metric: str, config: DetectorConfig) -> SeriesData:
    """Successful samples of the series up to `run`, split into baseline and recent windows."""
    key = SeriesKey.of(run, metric)
    bounds = bounds_for(run, key, config)
    runs = comparable_runs(run).filter(slot__gt=bounds.baseline_start, slot__lte=bounds.end)
    rows = (
        Sample.objects.filter(run__in=runs, error_category="", **{f"{metric}__gt": 0})
        # The slot range again, on the sample's own copy: only those months' partitions are read.
        .filter(slot__gt=bounds.baseline_start, slot__lte=bounds.end)
        .exclude(outcome__in=SPEEDLESS_OUTCOMES)
        .values_list("run__slot", "run__tod_bucket", metric)
        .order_by("run__slot", "index")
    )
    slots, buckets, values = [], [], []
    for slot, bucket, value in rows.iterator():
        slots.append(slot.timestamp())
        buckets.append(bucket)
        values.append(value)
    times = np.array(slots, dtype=float)
    bucket_arr = np.array(buckets, dtype=int)
    value_arr = np.array(values, dtype=float)
    recent = times > bounds.recent_start.timestamp()
    baseline = Window.of(value_arr[~recent], bucket_arr[~recent], times[~recent])
    return SeriesData(
        key, bounds, baseline, Window.of(value_arr[recent], bucket_arr[recent], times[recent])
    )
