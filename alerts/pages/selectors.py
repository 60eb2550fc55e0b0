"""Reading alerts: the one place that pages, the API and other apps' pages ask."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import median

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Count, Max, Min, QuerySet

from alerts.config import detector_config
from alerts.lifecycle.series import series_runs
from alerts.models import ACTIVE, Alert, ChangePoint, Kind, Metric, Segment, Severity, Status
from benchmarks.models import Run, Vantage
from providers.models import Endpoint, Provider

# The alerts page's tabs: which statuses each shows.
VIEWS = {
    "open": (Status.OPEN,),
    "acknowledged": (Status.ACKNOWLEDGED,),
    "active": ACTIVE,
    "history": (Status.RESOLVED, Status.ACCEPTED, Status.INVALID, Status.NEW_NORMAL),
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
        Alert.objects.filter(status__in=ACTIVE)
        .select_related("workload", "vantage")
        .order_by("endpoint_id", "severity", "-opened_at")  # "major" sorts before "minor"
    )
    wanted = set(ids)
    # A whole board (hundreds of endpoints) reads every active alert, few at any time, and
    # keeps its endpoints' here: `endpoint_id IN (…)` of 400 ids cost more than the read.
    if len(wanted) <= _IDS_IN_SQL:
        alerts = alerts.filter(endpoint_id__in=wanted)
    for alert in alerts:
        if alert.endpoint_id in wanted:
            found[alert.endpoint_id].append(alert)
    return dict(found)


_IDS_IN_SQL = 20


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
    # A mistyped slug is refused: an empty list would read as "nothing is wrong".
    for name, value, model in (
        ("endpoint", endpoint, Endpoint),
        ("provider", provider, Provider),
        ("vantage", vantage, Vantage),
    ):
        if value and not model.objects.filter(slug=value).exists():
            errors[name] = f"{name}: no {name} with slug '{value}'."
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


@dataclass(frozen=True, slots=True)
class BlindSpell:
    """After "accept as new baseline": the new level's history is too short for a baseline of
    its own until about `until`; meanwhile only changes of `large` (a fraction) or more,
    against the accepted level, alert."""

    runs: int  # baseline runs the new segment has so far
    needed: int
    days: float  # ...spread over at least this many days
    until: datetime
    large: float

    @property
    def large_percent(self) -> int:
        return round(self.large * 100)


def blind_spell(alert: Alert, *, now: datetime) -> BlindSpell | None:
    """The blind spell of an accepted alert's series, or None once it is over."""
    segment = Segment.objects.filter(alert=alert).first()
    if alert.status != Status.ACCEPTED or alert.endpoint_id is None or segment is None:
        return None
    config = detector_config()
    slots = list(
        series_runs(alert)
        .filter(slot__gt=segment.starts_at - timedelta(days=config.baseline_days))
        .order_by("slot")
        .values_list("slot", flat=True)
    )
    long_start = now - timedelta(hours=config.long_hours)
    own = [s.timestamp() for s in slots if segment.starts_at <= s <= long_start]
    if config.enough_baseline(own):
        return None
    gaps = [(b - a).total_seconds() for a, b in zip(slots, slots[1:], strict=False)]
    gap = timedelta(seconds=median(gaps) if gaps else 8 * 3600)
    history = max(gap * config.min_baseline, timedelta(days=config.min_baseline_days))
    until = segment.starts_at + history + timedelta(hours=config.long_hours)
    return BlindSpell(
        len(own),
        config.min_baseline,
        config.min_baseline_days,
        max(until, now),
        config.major_effect,
    )


@dataclass(frozen=True)
class BaselineWait:
    """No series has a baseline yet: how many days of runs one needs, and when alerts can start."""

    days_needed: int
    first_alerts_from: datetime


# The default schedule's pace (3 runs a day) when nothing has run for a day.
DEFAULT_RUNS_PER_DAY = 3


def baseline_wait(now: datetime) -> BaselineWait | None:
    """None once any series has enough baseline runs for the detector; else the wait.

    The detector's baseline ends where its longest recent window (ALERTS_LONG_HOURS) starts and
    needs ALERTS_MIN_BASELINE_RUNS finished runs there, spread over ALERTS_MIN_BASELINE_DAYS, so
    the wait is that window plus the days that many runs take at the pace of the busiest series
    in the last day (or those days, if longer).
    """
    recent = timedelta(hours=settings.ALERTS_LONG_HOURS)
    needed = settings.ALERTS_MIN_BASELINE_RUNS
    spread = timedelta(days=settings.ALERTS_MIN_BASELINE_DAYS)
    finished = Run.objects.filter(status__in=Run.FINISHED, ok_count__gt=0)
    per_series = ("endpoint", "workload", "vantage")
    ready = (
        finished.filter(slot__lt=now - recent)
        .values(*per_series)
        .annotate(n=Count("id"), span=Max("slot") - Min("slot"))
        .filter(n__gte=needed, span__gte=spread)
    )
    if ready.exists():
        return None
    first = Run.objects.filter(status__in=Run.FINISHED).aggregate(first=Min("slot"))["first"]
    last_day = finished.filter(slot__gte=now - timedelta(days=1)).values(*per_series)
    pace = last_day.annotate(n=Count("id")).aggregate(top=Max("n"))["top"]
    if first is None or now - first < timedelta(days=1):
        pace = DEFAULT_RUNS_PER_DAY  # less than a day of runs says nothing about the pace yet
    pace = pace or DEFAULT_RUNS_PER_DAY
    baseline_days = max(math.ceil(needed / pace), math.ceil(spread / timedelta(days=1)))
    # The long window holds at least `long_min_runs` runs: six days of a daily schedule.
    long_runs = detector_config().long_min_runs
    days = max(math.ceil(recent / timedelta(days=1)), math.ceil(long_runs / pace)) + baseline_days
    return BaselineWait(days_needed=days, first_alerts_from=(first or now) + timedelta(days=days))
