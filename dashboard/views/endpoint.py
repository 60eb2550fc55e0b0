"""Endpoint page ("/endpoints/<slug>/"): history, time of day, context, concurrency, errors."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from alerts.pages.selectors import change_points, open_alerts_by_endpoint
from benchmarks.breaker import open_trips
from benchmarks.models import Run, Vantage, Workload
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.history import endpoint_history
from benchmarks.selectors.scope import Vantages, Workloads, since
from providers.models import Endpoint

from ..alert_badges import banner_items, banner_level
from ..caching import revalidated
from ..forms import FilterForm
from ..run_rows import recent_rows_html
from .access import dashboard_view

FIELDS = ("workload", "window", "vantage")
# What the page's charts read of the history (pages.js, endpoint()): the summary, errors and
# recent runs are written into the HTML, and a chart point needs only these of a run's keys.
CHART_PARTS = ("runs", "bands", "tod_profile", "context", "concurrency", "roofline")
POINT_KEYS = ("slot", "id", "ttft_ms", "decode_tps")
# What the charts' saturation mark reads (pages.js saturationNote), sent only for marked points.
SATURATION_KEYS = ("saturated", "saturated_runs", "runs")


@dashboard_view
@revalidated
def endpoint_page(request: HttpRequest, slug: str) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint.objects.select_related("provider"), slug=slug)
    filters = BoardFilters.from_query(request.GET)
    # Read once for the history, the change points and the filter bar (an unknown slug stays
    # a slug).
    workloads, vantages = Workloads.load(), Vantages.load()
    workload, vantage = workloads.resolve(filters.workload), vantages.resolve(filters.vantage)
    history = endpoint_history(
        endpoint,
        workload=workload or filters.workload,
        vantage=vantage or filters.vantage,
        window_hours=filters.window_hours,
        workloads=workloads,
    )
    alerts = open_alerts_by_endpoint([endpoint.id]).get(endpoint.id, [])
    return render(
        request,
        "dashboard/endpoint.html",
        {
            "endpoint": endpoint,
            "filters": filters,
            "form": FilterForm(filters, fields=FIELDS, workloads=workloads, vantages=vantages),
            "history": history,
            "chart_data": chart_data(history),
            "recent_rows": recent_rows_html(history["recent_runs"]),
            "params": {k: v for k, v in filters.as_query().items() if k in FIELDS},
            "has_runs": bool(history["runs"] or history["recent_runs"]),
            "ever_ran": bool(history["runs"] or history["recent_runs"])
            or Run.objects.filter(endpoint=endpoint).exists(),
            "alerts": banner_items(alerts, endpoint.label),
            "alert_level": banner_level(alerts),
            "change_points": _change_points(endpoint, workload, vantage, filters.window_hours),
            "breaker_trips": open_trips(endpoint),
        },
    )


def _change_points(
    endpoint: Endpoint, workload: Workload | None, vantage: Vantage | None, window_hours: int
) -> list[dict]:
    """Change points of the series the history charts show (this workload and vantage, in
    the window), for their annotations."""
    if workload is None or vantage is None:
        return []
    return change_points(
        endpoint.id,
        workload_id=workload.id,
        vantage_id=vantage.id,
        since=since(window_hours),
    )


def chart_data(history: dict) -> dict:
    """The part of endpoint_history the page embeds as JSON for its charts (a year of day
    points with every key was ~200 KB; the API still answers all of it)."""
    data = {part: history[part] for part in CHART_PARTS}
    data["runs"] = [_chart_point(point) for point in history["runs"]]
    return data


def _chart_point(point: dict) -> dict:
    shown = {key: point[key] for key in POINT_KEYS}
    if point.get("saturated") or point.get("saturated_runs"):
        shown.update((key, point[key]) for key in SATURATION_KEYS if key in point)
    return shown
