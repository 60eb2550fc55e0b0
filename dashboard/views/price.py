"""Speed × price page ("/price/"): decode speed (or TTFT) against output price, with the
cheapest-and-fastest frontier."""

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.lanes import lane_groups
from benchmarks.selectors.leaderboard import main_board
from benchmarks.selectors.pricing import pareto_frontier

from ..caching import revalidated
from ..forms import FilterForm
from .access import dashboard_view
from .empty import empty_state
from .listing import listed, wants_all
from .price_html import price_rows_html

AXES = {"decode": ("decode_tps_p50", True), "ttft": ("ttft_p50_ms", False)}
FIELDS = ("workload", "concurrency", "tod", "window", "vantage")


@dashboard_view
@revalidated
def price_page(request: HttpRequest) -> HttpResponse:
    filters = BoardFilters.from_query(request.GET)
    y_axis = request.GET.get("y", "decode")
    if y_axis not in AXES:
        raise ValidationError({"y": [f"y: choose decode or ttft (got {y_axis!r})."]})
    rows = [row for row in main_board(filters) if row.has_data]
    points = [
        {
            "slug": row.slug,
            "label": row.label,
            "provider": row.provider,
            "simulated": row.simulated,
            "price_out": row.price_out_per_mtok,
            "price_in": row.price_in_per_mtok,
            "decode_tps_p50": row.decode_tps_p50,
            "ttft_p50_ms": row.ttft_p50_ms,
            "cost": row.cost_per_request_usd,
            "runs": row.runs,
            "saturated_runs": row.saturated_runs,
        }
        for row in rows
    ]
    frontiers = {
        axis: [
            p["slug"]
            for p in pareto_frontier(points, price="price_out", speed=attr, higher_is_better=higher)
        ]
        for axis, (attr, higher) in AXES.items()
    }
    unpriced = [p for p in points if p["price_out"] is None]
    # The table lists the cheapest PAGE_ROWS (dashboard.views.listing); the chart plots them all.
    by_price = sorted(points, key=lambda p: (p["price_out"] is None, p["price_out"] or 0))
    table, all_rows_query = listed(request.GET, by_price)
    keep = {"y": y_axis} if y_axis != "decode" else {}
    if wants_all(request.GET):
        keep["rows"] = "all"
    return render(
        request,
        "dashboard/price.html",
        {
            "filters": filters,
            "form": FilterForm(filters, fields=FIELDS),
            "keep": keep,
            "y_axis": y_axis,
            "points": table,
            # The table's rows, built in Python (price_html.price_rows_html).
            "table_rows": price_rows_html(table, set(frontiers[y_axis])),
            "point_count": len(points),
            "all_rows_query": all_rows_query,
            "chart": {
                "points": points,
                "frontiers": frontiers,
                "y": y_axis,
                # The lanes of one model, joined by a line: what the faster lane costs.
                "lanes": [
                    [g.standard.slug, *(c.row.slug for c in g.lanes)] for g in lane_groups(rows)
                ],
            },
            "unpriced": unpriced,
            "empty": empty_state(has_data=bool(points)),
            "params": {**filters.as_query(), **({"rows": "all"} if "rows" in keep else {})},
        },
    )
