"""Compare page ("/compare/?e=slug&e=slug"): two to four endpoints on every chart."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from benchmarks.selectors import agent_loop
from benchmarks.selectors.days import per_day
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.history import compare_histories
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.selectors.scope import Vantages, Workloads

from ..caching import revalidated
from ..compare_picker import picker_groups, picker_html
from ..forms import COMPARE_MAX, COMPARE_MIN, FilterForm, parse_compare
from .access import dashboard_view

FIELDS = ("workload", "window", "vantage")


@dashboard_view
@revalidated
def compare_page(request: HttpRequest) -> HttpResponse:
    chosen = parse_compare(request.GET)
    filters = BoardFilters.from_query(request.GET)
    groups = picker_groups()
    # Read once for the histories and the filter bar.
    workloads, vantages = Workloads.load(), Vantages.load()
    context = {
        "filters": filters,
        "form": FilterForm(filters, fields=FIELDS, workloads=workloads, vantages=vantages),
        "chosen": chosen,
        "keep_e": [ep.slug for ep in chosen],
        "all_endpoints": bool(groups),
        "picker": picker_html(groups, {ep.slug for ep in chosen}),
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
            vantage=vantages.resolve(filters.vantage),
            window_hours=filters.window_hours,
            workloads=workloads,
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
