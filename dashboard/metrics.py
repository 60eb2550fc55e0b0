"""/metrics in the Prometheus exposition format: what tokspeed measured, and its own health.

Per endpoint × workload × vantage (labels: provider, endpoint, workload, vantage: the configured
slugs, so cardinality is bounded by what an operator set up; never a run or a sample):
- the latest finished run's TTFT and decode p50 / p90 (its summary),
- the 72 h medians, error rate and availability (1 − error rate), the leaderboard's own
  definitions (benchmarks.selectors.leaderboard with a 72 h window),
- the age of the latest run, and the series' open alerts,
- the 72 h runs whose client was saturated, per series and as one label-free share.
tokspeed's own health: runs queued and running, runs failed in the last hour, beat's last tick,
the outbox backlog (emails and channel posts) and the workers seen lately (benchmarks.health).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Count, OuterRef, Subquery
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from alerts.delivery import outbox
from alerts.models import ACTIVE, Alert
from benchmarks.models import Pulse, Run, RunStatus
from benchmarks.pulse import WORKER
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from providers.models import Endpoint

SERIES = ["provider", "endpoint", "workload", "vantage"]
# (run column or summary metric, quantile, name, help): medians are the run's own columns,
# p90s its summary's.
LATEST = (
    ("ttft_p50_ms", "", "tokspeed_latest_ttft_p50_ms", "Latest run's median time to first token"),
    ("ttft_ms", "p90", "tokspeed_latest_ttft_p90_ms", "Latest run's p90 time to first token"),
    ("decode_tps_p50", "", "tokspeed_latest_decode_p50_tps", "Latest run's median decode speed"),
    ("decode_tps", "p90", "tokspeed_latest_decode_p90_tps", "Latest run's p90 decode speed"),
)
WINDOW = (
    ("ttft_p50_ms", "tokspeed_ttft_median_72h_ms", "Median of run TTFT medians, 72 h"),
    ("decode_tps_p50", "tokspeed_decode_median_72h_tps", "Median of run decode medians, 72 h"),
    ("error_rate", "tokspeed_error_rate_72h", "Share of requests that failed, 72 h"),
)


def _gauge(name: str, doc: str, labels: list[str] | None = None) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=labels or [])


class Measurements(Collector):
    def __init__(self, now: datetime) -> None:
        self.now = now

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from self._latest()
        yield from self._window()
        yield self._open_alerts()

    def _latest(self) -> Iterator[GaugeMetricFamily]:
        families = [_gauge(name, doc, SERIES) for _, _, name, doc in LATEST]
        age = _gauge("tokspeed_last_run_age_seconds", "Seconds since the latest run's slot", SERIES)
        for run in _latest_runs():
            labels = [
                run.endpoint.provider.slug,
                run.endpoint.slug,
                run.workload.slug,
                run.vantage.slug,
            ]
            for family, (metric, quantile, _, _) in zip(families, LATEST, strict=True):
                if quantile:
                    value = (run.summary.get(metric) or {}).get(quantile)
                else:
                    value = getattr(run, metric)
                if value is not None:
                    family.add_metric(labels, float(value))
            age.add_metric(labels, (self.now - run.slot).total_seconds())
        yield from families
        yield age

    def _window(self) -> Iterator[GaugeMetricFamily]:
        families = [_gauge(name, doc, SERIES) for _, name, doc in WINDOW]
        availability = _gauge(
            "tokspeed_availability_72h", "Share of requests that succeeded, 72 h", SERIES
        )
        runs = _gauge("tokspeed_runs_72h", "Finished runs in the last 72 h", SERIES)
        saturated = _gauge(
            "tokspeed_saturated_runs_72h",
            "Finished runs in the last 72 h whose client was saturated (kept in the medians)",
            SERIES,
        )
        all_runs = all_saturated = 0
        pairs = (
            Run.objects.filter(slot__gte=self.now - timedelta(hours=72))
            .order_by()
            .values_list("workload__slug", "vantage__slug")
            .distinct()
        )
        provider_of = dict(Endpoint.objects.values_list("id", "provider__slug"))
        for workload, vantage in pairs:
            filters = BoardFilters(workload=workload, vantage=vantage, window_hours=72)
            for row in leaderboard(filters):
                if not row.runs:
                    continue
                labels = [provider_of[row.endpoint_id], row.slug, workload, vantage]
                for family, (field, _, _) in zip(families, WINDOW, strict=True):
                    value = getattr(row, field)
                    if value is not None:
                        family.add_metric(labels, float(value))
                if row.error_rate is not None:
                    availability.add_metric(labels, 1.0 - row.error_rate)
                runs.add_metric(labels, row.runs)
                saturated.add_metric(labels, row.saturated_runs)
                all_runs += row.runs
                all_saturated += row.saturated_runs
        share = _gauge(
            "tokspeed_saturated_share_72h",
            "Share of the last 72 h's finished runs whose client was saturated (0 without runs)",
        )
        share.add_metric([], all_saturated / all_runs if all_runs else 0.0)
        yield from families
        yield availability
        yield runs
        yield saturated
        yield share

    def _open_alerts(self) -> GaugeMetricFamily:
        family = _gauge(
            "tokspeed_open_alerts", "Open or acknowledged alerts", [*SERIES, "kind", "severity"]
        )
        grouped = (
            Alert.objects.filter(status__in=ACTIVE, endpoint__isnull=False)
            .values(
                "endpoint__provider__slug",
                "endpoint__slug",
                "workload__slug",
                "vantage__slug",
                "kind",
                "severity",
            )
            .annotate(n=Count("id"))
            .order_by()
        )
        for g in grouped:
            # An outage of the whole endpoint has no workload nor vantage: an empty label (as
            # PromQL reads a missing one), not the text "None"
            family.add_metric(
                ["" if v is None else str(v) for k, v in g.items() if k != "n"], g["n"]
            )
        return family


def _latest_runs():
    """Each series' newest finished run: PostgreSQL's DISTINCT ON; elsewhere (SQLite, `make
    run`'s database, which has no DISTINCT ON) a correlated subquery, fine at its size."""
    runs = Run.objects.filter(status__in=Run.FINISHED)
    if connection.vendor == "postgresql":
        latest = runs.order_by("endpoint_id", "workload_id", "vantage_id", "-slot", "-id").distinct(
            "endpoint_id", "workload_id", "vantage_id"
        )
    else:
        newest = runs.filter(
            endpoint_id=OuterRef("endpoint_id"),
            workload_id=OuterRef("workload_id"),
            vantage_id=OuterRef("vantage_id"),
        ).order_by("-slot", "-id")
        latest = runs.filter(id=Subquery(newest.values("id")[:1]))
    return latest.select_related("endpoint__provider", "workload", "vantage")


class Health(Collector):
    def __init__(self, now: datetime) -> None:
        self.now = now

    def collect(self) -> Iterator[GaugeMetricFamily]:
        runs = _gauge("tokspeed_runs", "Runs by state now", ["state"])
        counts = dict(
            Run.objects.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING])
            .order_by()
            .values_list("status")
            .annotate(n=Count("id"))
        )
        for state in (RunStatus.QUEUED, RunStatus.RUNNING):
            runs.add_metric([state], counts.get(state, 0))
        yield runs
        failed = _gauge("tokspeed_runs_failed_last_hour", "Runs that failed in the last hour")
        hour_ago = self.now - timedelta(hours=1)
        failed.add_metric(
            [], Run.objects.filter(status=RunStatus.FAILED, finished_at__gte=hour_ago).count()
        )
        yield failed
        tick = Pulse.objects.filter(name=Pulse.TICK).values_list("seen_at", flat=True).first()
        beat = _gauge("tokspeed_beat_last_tick_age_seconds", "Seconds since beat's last tick")
        if tick is not None:
            beat.add_metric([], (self.now - tick).total_seconds())
        yield beat
        backlog = outbox.backlog()
        waiting = _gauge("tokspeed_outbox_backlog", "Emails and channel posts not yet sent")
        waiting.add_metric([], backlog.count)
        yield waiting
        oldest = _gauge("tokspeed_outbox_oldest_age_seconds", "Age of the oldest unsent message")
        oldest.add_metric([], backlog.age_s(self.now))
        yield oldest
        recent = self.now - timedelta(seconds=settings.TOKSPEED_HEALTH_WORKER_S)
        workers = _gauge("tokspeed_workers", "Workers seen in the health window")
        workers.add_metric([], Pulse.objects.filter(kind=WORKER, seen_at__gte=recent).count())
        yield workers


def exposition(now: datetime) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Measurements(now))
    registry.register(Health(now))
    return generate_latest(registry)
