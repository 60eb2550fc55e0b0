"""Loading a series' windows from stored samples (the detector itself never touches the DB).

A series is endpoint × workload × vantage × metric. Its history restarts when the probe's
client version changes, when what a run sends changes (concurrency, context padding), and at an
accepted new baseline (Segment): samples from before any of these are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.db import connections
from django.db.models import Q

from alerts.detection.noise import Lags
from alerts.detection.rules import DetectorConfig
from alerts.detection.runs import Runs
from alerts.models import Segment, SeriesState
from benchmarks.models import Run, RunOrigin, Sample
from benchmarks.stats import SPEEDLESS_OUTCOMES

SUMMARIZED = Run.FINISHED  # the series holds runs whose summary is written (done or partial)
# Each speed metric's median in a run's summary: set only when the run measured it.
RUN_MEDIAN = {"decode_tps": "decode_tps_p50", "ttft_ms": "ttft_p50_ms"}
PROVIDER_PEERS = 40  # the provider's other series whose noise readings a run's series pool


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
    """The windows of one evaluation (run slots): baseline (baseline_start, long_start],
    long window (long_start, end], last day (recent_start, end]."""

    baseline_start: datetime
    long_start: datetime
    recent_start: datetime
    end: datetime
    segment_start: datetime | None


@dataclass(frozen=True, slots=True)
class SeriesData:
    """A series' runs from the start of its baseline window (or segment) up to the run."""

    key: SeriesKey
    bounds: Bounds
    history: Runs
    segment: Segment | None = None  # the accepted new baseline it starts at, if any
    # The endpoint's demand time zone (its own, else its provider's; None: UTC): the runs'
    # time-of-day buckets and days follow it (docs/alerts.md, "Local-time demand")
    zone: str | None = None


def current_segments(run: Run, metrics: Sequence[str]) -> dict[str, Segment]:
    """The accepted new baseline (Segment) each of the run's series starts at, for the metrics
    that have one, with the alert that was accepted: one query for all of them."""
    found: dict[str, Segment] = {}
    rows = Segment.objects.filter(
        endpoint_id=run.endpoint_id,
        workload_id=run.workload_id,
        vantage_id=run.vantage_id,
        metric__in=metrics,
        starts_at__lte=run.slot,
    ).select_related("alert")
    for segment in rows.order_by("-starts_at"):
        found.setdefault(segment.metric, segment)
    return found


def long_window_start(run: Run, metrics: Sequence[str], config: DetectorConfig) -> datetime:
    """Where the long window starts: `long_hours` before the run, or further back to hold
    `long_min_runs` runs on a sparse schedule (as detector.assess_series reaches). Runs that
    measured none of the metrics (failed outright) are not in the detector's series, so they
    do not count: its long window reaches past them, and its baseline with it."""
    start = run.slot - timedelta(hours=config.long_hours)
    measured = Q()
    for metric in metrics:
        measured |= Q(**{f"{RUN_MEDIAN[metric]}__isnull": False})
    oldest = (
        comparable_runs(run)
        .filter(measured, slot__lte=run.slot)
        .order_by("-slot")
        .values_list("slot", flat=True)[config.long_min_runs - 1 : config.long_min_runs]
    )
    return min([start, *(slot - timedelta(seconds=1) for slot in oldest)])


def bounds_for(
    run: Run, config: DetectorConfig, long_start: datetime, segment: Segment | None
) -> Bounds:
    segment_start = segment.starts_at if segment is not None else None
    recent_start = run.slot - timedelta(hours=config.recent_hours)
    baseline_start = long_start - timedelta(days=config.baseline_days)
    if segment_start is not None and segment_start > baseline_start:
        # The step that was accepted is the first thing the new history contains.
        baseline_start = segment_start - timedelta(microseconds=1)
    return Bounds(baseline_start, long_start, recent_start, run.slot, segment_start)


def series_runs(of: Run | SeriesKey):
    """Finished runs of the endpoint × workload × vantage of a run or series key."""
    return Run.objects.filter(
        endpoint_id=of.endpoint_id,
        workload_id=of.workload_id,
        vantage_id=of.vantage_id,
        status__in=SUMMARIZED,
        downgraded=False,  # served below its lane: not the lane's speed (providers.lanes)
    )


def comparable_runs(run: Run):
    """Runs of the same series that measured the same thing the same way as `run`."""
    return series_runs(run).filter(
        client_version=run.client_version,
        concurrency=run.concurrency,
        context_tokens=run.context_tokens,
    )


def _fetch(query) -> list[tuple]:
    """A values_list query's rows straight from the cursor: an hourly series' month is 3,700
    samples, and Django's row-by-row iteration took as long as the query itself."""
    sql, params = query.query.sql_with_params()
    with connections[query.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def load(run: Run, metrics: Sequence[str], config: DetectorConfig) -> dict[str, SeriesData]:
    """Successful samples of the series up to `run`, reduced to one value per run, for each
    metric: one query for all of them (they share the runs; only an accepted new baseline of
    one metric starts its window later, and its rows are dropped here)."""
    keys = {metric: SeriesKey.of(run, metric) for metric in metrics}
    long_start = long_window_start(run, metrics, config)
    segments = current_segments(run, metrics)
    bounds = {m: bounds_for(run, config, long_start, segments.get(m)) for m in metrics}
    start = min(b.baseline_start for b in bounds.values())
    runs = comparable_runs(run).filter(slot__gt=start, slot__lte=run.slot)
    # Run ids with the samples and each run's slot once: an hourly series' month is thousands
    # of samples, and a datetime per sample cost more than the detector.
    slot_of, extra = {}, []
    for pk, slot, origin in runs.values_list("id", "slot", "origin"):
        slot_of[pk] = slot.timestamp()
        if origin != RunOrigin.SCHEDULED:  # a confirmation run, or one a person asked for
            extra.append(slot_of[pk])
    samples = (
        Sample.objects.filter(run__in=runs, error_category="")
        # The slot range again, on the sample's own copy: only those months' partitions are read.
        .filter(slot__gt=start, slot__lte=run.slot)
        .exclude(outcome__in=SPEEDLESS_OUTCOMES)
        .order_by()  # Runs sorts them: the model's ordering joined the runs again to sort
        .values_list("run_id", *metrics)
    )
    rows = _fetch(samples)
    zone = run.endpoint.demand_zone or None
    slots = np.array([slot_of[pk] for pk, *_ in rows], dtype=float)
    out = {}
    for k, metric in enumerate(metrics, start=1):
        values = np.array([row[k] for row in rows], dtype=float)  # None (not measured) → nan
        mine = slots > bounds[metric].baseline_start.timestamp()
        history = Runs.from_samples(values[mine], slots[mine], zone, extra)
        segment = segments.get(metric)
        out[metric] = SeriesData(keys[metric], bounds[metric], history, segment, zone)
    return out


def provider_noise(run: Run, metrics: Sequence[str], config: DetectorConfig) -> list[Lags]:
    """What the provider's other series (its other endpoints, workloads and vantages) last read
    of their noise's correlation (SeriesState.noise_lags), for the detector to pool with the
    run's own: a drifting provider moves them together, and one series' 28 days read its drift
    least surely. Readings from series not evaluated within the baseline window are left
    out; the newest PROVIDER_PEERS at most."""
    since = run.slot - timedelta(days=config.baseline_days)
    stored = (
        SeriesState.objects.filter(
            endpoint__provider_id=run.endpoint.provider_id,
            metric__in=metrics,
            last_slot__gte=since,
            noise_lags__isnull=False,
        )
        .exclude(
            endpoint_id=run.endpoint_id, workload_id=run.workload_id, vantage_id=run.vantage_id
        )
        .order_by("-last_slot")
        .values_list("noise_lags", flat=True)[:PROVIDER_PEERS]
    )
    found = (Lags.from_dict(data) if isinstance(data, dict) else None for data in stored)
    return [lags for lags in found if lags is not None]
