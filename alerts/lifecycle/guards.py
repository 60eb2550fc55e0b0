"""Noise guards (docs/design.md §7): flapping series go digest-only; many series of one vantage
getting worse at once is the probe's problem, reported as one alert instead of many.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from alerts.detection.detector import Verdict
from alerts.lifecycle.series import SeriesKey
from alerts.models import AlertEvent, EventKind, SeriesState
from alerts.wording import METRIC_WORDS
from benchmarks.models import Workload
from providers.models import Endpoint

FLIPS = (EventKind.OPENED, EventKind.RESOLVED)


def is_flapping(key: SeriesKey, *, now: datetime) -> bool:
    """True when this flip would be more than ALERTS_FLAP_LIMIT flips of the series in 7 days."""
    flips = AlertEvent.objects.filter(
        **{f"alert__{name}": value for name, value in key.filter().items()},
        kind__in=FLIPS,
        created_at__gte=now - timedelta(days=7),
    ).count()
    return flips + 1 > settings.ALERTS_FLAP_LIMIT


@dataclass(frozen=True, slots=True)
class ProbeCheck:
    """How many of a vantage's recently evaluated series are positive right now."""

    positive: int
    total: int
    endpoints: int  # distinct endpoints among the positive series
    series: list[SeriesKey]

    @property
    def share(self) -> float:
        return self.positive / self.total if self.total else 0.0

    @property
    def verdict(self) -> Verdict:
        if (
            self.share > settings.ALERTS_INFRA_SHARE
            and self.endpoints >= settings.ALERTS_INFRA_MIN_ENDPOINTS
        ):
            return Verdict.POSITIVE
        return Verdict.CLEAR


def probe_check(vantage_id: int, *, slot: datetime, recent_hours: int) -> ProbeCheck:
    """The latest verdict of every series of the vantage evaluated within recent_hours of slot.

    Series whose latest evaluation had no data are left out of the denominator.
    """
    states = SeriesState.objects.filter(
        vantage_id=vantage_id,
        last_slot__gt=slot - timedelta(hours=recent_hours),
        last_verdict__in=[Verdict.POSITIVE, Verdict.CLEAR, Verdict.HOLD],
    ).values_list("endpoint_id", "workload_id", "metric", "last_verdict")
    positive = [
        SeriesKey(endpoint, workload, vantage_id, metric)
        for endpoint, workload, metric, verdict in states
        if verdict == Verdict.POSITIVE
    ]
    return ProbeCheck(
        positive=len(positive),
        total=len(states),
        endpoints=len({key.endpoint_id for key in positive}),
        series=positive,
    )


def describe_series(keys: list[SeriesKey]) -> list[dict]:
    """Series keys as words for the probe alert's email: endpoint, workload, metric."""
    if not keys:
        return []
    endpoints = Endpoint.objects.select_related("provider").in_bulk([k.endpoint_id for k in keys])
    workloads = Workload.objects.in_bulk([k.workload_id for k in keys])
    return [
        {
            "endpoint": endpoints[k.endpoint_id].label,
            "workload": workloads[k.workload_id].name,
            "metric": METRIC_WORDS.get(k.metric, k.metric),
        }
        for k in sorted(keys, key=lambda k: (k.endpoint_id, k.workload_id, k.metric))
        if k.endpoint_id in endpoints and k.workload_id in workloads
    ]
