"""Endpoint page ("/endpoints/<slug>/"): history, time of day, context, concurrency, errors."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from providers.models import Endpoint

from ..forms import FilterForm
from ..models import Run
from ..selectors.filters import BoardFilters
from ..selectors.history import endpoint_history
from .access import dashboard_view

FIELDS = ("workload", "window", "vantage")


@dashboard_view
def endpoint_page(request: HttpRequest, slug: str) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint.objects.select_related("provider"), slug=slug)
    filters = BoardFilters.from_query(request.GET)
    history = endpoint_history(
        endpoint,
        workload=filters.workload,
        vantage=filters.vantage,
        window_hours=filters.window_hours,
    )
    return render(
        request,
        "benchmarks/endpoint.html",
        {
            "endpoint": endpoint,
            "filters": filters,
            "form": FilterForm(filters, fields=FIELDS),
            "history": history,
            "params": {k: v for k, v in filters.as_query().items() if k in FIELDS},
            "has_runs": bool(history["runs"] or history["recent_runs"]),
            "ever_ran": bool(history["runs"] or history["recent_runs"])
            or Run.objects.filter(endpoint=endpoint).exists(),
        },
    )
