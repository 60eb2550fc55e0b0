"""Reading alerts: the one place that pages, the API and other apps' pages ask."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Count, Max, Min, QuerySet

from benchmarks.models import Run, Sample

from .models import ACTIVE, Alert, ChangePoint, Kind, Metric, Severity, Status

# The alerts page's tabs: which statuses each shows.
VIEWS = {
    "open": (Status.OPEN,),
    "acknowledged": (Status.ACKNOWLEDGED,),
    "active": ACTIVE,
    "history": (Status.RESOLVED, Status.ACCEPTED, Status.INVALID),
    "all": tuple(Status.values),
}
VIEW_LABELS = {
    "active": "Open and acknowledged",
    "open": "Open",
    "acknowledged": "Acknowledged",
    "history": "History",
    "all": "All",
}


def open_alerts_by_endpoint(endpoint_ids: Iterable[int]) -> dict[int, list[Alert]]:
    """Active (open or acknowledged) alerts per endpoint id, most severe first: for badges."""
    ids = list(endpoint_ids)
    found: dict[int, list[Alert]] = defaultdict(list)
    if not ids:
        return {}
    alerts = (
        Alert.objects.filter(endpoint_id__in=ids, status__in=ACTIVE)
        .select_related("workload", "vantage")
        .order_by("endpoint_id", "severity", "-opened_at")  # "major" sorts before "minor"
    )
    for alert in alerts:
        found[alert.endpoint_id].append(alert)
    return dict(found)


def alerts(
    *,
    view: str = "active",
    kind: str = "",
    metric: str = "",
    severity: str = "",
    endpoint: str = "",
    provider: str = "",
    vantage: str = "",
) -> QuerySet[Alert]:
    """Alerts filtered by the page's / API's parameters; a bad value is a ValidationError."""
    errors = {}
    if view not in VIEWS:
        errors["view"] = f"Choose one of: {', '.join(VIEWS)}."
    for name, value, choices in (
        ("kind", kind, Kind.values),
        ("metric", metric, Metric.values),
        ("severity", severity, Severity.values),
    ):
        if value and value not in choices:
            errors[name] = f"Choose one of: {', '.join(choices)}."
    if errors:
        raise ValidationError(errors)
    query = Alert.objects.filter(status__in=VIEWS[view]).select_related(
        "endpoint__provider", "workload", "vantage"
    )
    if kind:
        query = query.filter(kind=kind)
    if metric:
        query = query.filter(metric=metric)
    if severity:
        query = query.filter(severity=severity)
    if endpoint:
        query = query.filter(endpoint__slug=endpoint)
    if provider:
        query = query.filter(endpoint__provider__slug=provider)
    if vantage:
        query = query.filter(vantage__slug=vantage)
    return query.order_by("-opened_at", "-id")


def change_points(
    endpoint_id: int,
    *,
    workload_id: int | None = None,
    vantage_id: int | None = None,
    since: datetime | None = None,
) -> list[dict]:
    """Change points of an endpoint's series for chart annotations (JSON-ready)."""
    query = ChangePoint.objects.filter(endpoint_id=endpoint_id)
    if workload_id is not None:
        query = query.filter(workload_id=workload_id)
    if vantage_id is not None:
        query = query.filter(vantage_id=vantage_id)
    if since is not None:
        query = query.filter(at__gte=since)
    return [
        {
            "at": point.at.isoformat(),
            "metric": point.metric,
            "workload_id": point.workload_id,
            "vantage_id": point.vantage_id,
            "before": point.before_median,
            "after": point.after_median,
            "change": point.change,
        }
        for point in query.order_by("at")
    ]


@dataclass(frozen=True)
class BaselineWait:
    """No series has a baseline yet: how many days of runs one needs, and when alerts can start."""

    days_needed: int
    first_alerts_from: datetime


# The default schedule's pace (3 runs a day × 5 requests) when nothing has run for a day.
DEFAULT_SAMPLES_PER_DAY = 15


def baseline_wait(now: datetime) -> BaselineWait | None:
    """None once any series has enough baseline samples for the detector; else the wait.

    The detector compares the last ALERTS_RECENT_HOURS with the days before them and needs
    ALERTS_MIN_BASELINE successful requests there, so the wait is the recent window plus the
    days that many requests take at the pace of the busiest series in the last day.
    """
    recent = timedelta(hours=settings.ALERTS_RECENT_HOURS)
    ok = Sample.objects.filter(error_category="", run__status__in=Run.FINISHED)
    per_series = ("run__endpoint", "run__workload", "run__vantage")
    ready = (
        ok.filter(started_at__lt=now - recent)
        .values(*per_series)
        .annotate(n=Count("id"))
        .filter(n__gte=settings.ALERTS_MIN_BASELINE)
    )
    if ready.exists():
        return None
    last_day = ok.filter(started_at__gte=now - timedelta(days=1)).values(*per_series)
    pace = last_day.annotate(n=Count("id")).aggregate(top=Max("n"))["top"]
    baseline_days = math.ceil(settings.ALERTS_MIN_BASELINE / (pace or DEFAULT_SAMPLES_PER_DAY))
    days = math.ceil(recent / timedelta(days=1)) + baseline_days
    first = Run.objects.filter(status__in=Run.FINISHED).aggregate(first=Min("slot"))["first"]
    return BaselineWait(days_needed=days, first_alerts_from=(first or now) + timedelta(days=days))
