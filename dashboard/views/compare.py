"""Compare page ("/compare/?e=slug&e=slug"): two to four endpoints on every chart."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from benchmarks.selectors import agent_loop
from benchmarks.selectors.days import per_day
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.history import compare_histories
from benchmarks.selectors.leaderboard import leaderboard
from providers.archive import LIVE_ENDPOINTS
from providers.models import Endpoint, families_by_model_id, model_family

from ..caching import revalidated
from ..forms import COMPARE_MAX, COMPARE_MIN, FilterForm, parse_compare
from .access import dashboard_view

FIELDS = ("workload", "window", "vantage")


@dashboard_view
@revalidated
def compare_page(request: HttpRequest) -> HttpResponse:
    chosen = parse_compare(request.GET)
    filters = BoardFilters.from_query(request.GET)
    context = {
        "filters": filters,
        "form": FilterForm(filters, fields=FIELDS),
        "chosen": chosen,
        "keep_e": [ep.slug for ep in chosen],
        "all_endpoints": picker_groups(),
        "min": COMPARE_MIN,
        "max": COMPARE_MAX,
        "ready": len(chosen) >= COMPARE_MIN,
    }
    if context["ready"]:
        slugs = [ep.slug for ep in chosen]
        ids = [ep.id for ep in chosen]
        rows = {row.slug: row for row in leaderboard(filters, endpoint_ids=ids)}
        ordered = [rows[slug] for slug in slugs if slug in rows]
        # A chosen endpoint without a row is explained, not silently left out.
        missing = [ep for ep in chosen if ep.slug not in rows or not rows[ep.slug].has_data]
        ordered = [row for row in ordered if row.has_data]
        histories = compare_histories(
            chosen,
            workload=filters.workload,
            vantage=filters.vantage,
            window_hours=filters.window_hours,
        )
        context.update(
            rows=ordered,
            missing=missing,
            histories=histories,
            per_day=per_day(filters.window_hours),
            projections=agent_loop.project(
                ordered,
                calls=agent_loop.DEFAULT_CALLS,
                tokens_per_call=agent_loop.DEFAULT_TOKENS_PER_CALL,
                tool_s=agent_loop.DEFAULT_TOOL_S,
            ),
            thresholds=agent_loop.THRESHOLDS,
            defaults={
                "calls": agent_loop.DEFAULT_CALLS,
                "tokens": agent_loop.DEFAULT_TOKENS_PER_CALL,
            },
        )
    return render(request, "dashboard/compare.html", context)


def picker_groups() -> list[tuple[str, list[Endpoint]]]:
    """Every endpoint, grouped by model family (the most widely served first), then by provider:
    the comparison people come for is one model at several providers."""
    groups: dict[str, list[Endpoint]] = {}
    named = families_by_model_id()
    for endpoint in (
        Endpoint.objects.select_related("provider")
        .filter(LIVE_ENDPOINTS)
        .order_by("provider__name", "model")
    ):
        if endpoint.display_name:
            family = model_family(endpoint.display_name)
        else:
            family = named.get(endpoint.model, endpoint.model)
        groups.setdefault(family, []).append(endpoint)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0].lower()))
