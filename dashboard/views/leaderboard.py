"""Leaderboard page ("/"): one row per endpoint, sortable, ties marked, filters in GET."""

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from alerts.selectors import open_alerts_by_endpoint
from benchmarks.buckets import BUCKETS
from benchmarks.selectors.filters import DEFAULT_SORT, SORT_KEYS, BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.selectors.rows import BoardRow

from ..caching import revalidated
from ..forms import FilterForm
from .access import dashboard_view
from .alert_badges import alert_cell_html
from .board_cells import row_cells_html
from .empty import empty_state


def sort_links(filters: BoardFilters) -> tuple[dict[str, str], dict[str, str]]:
    """For each sortable column: the URL that sorts by it (best first, then reversed) and the
    current direction arrow."""
    params = filters.as_query()
    urls, arrows = {}, {}
    for key, lower_is_better in SORT_KEYS.items():
        active = filters.sort_key == key
        target = f"-{key}" if active and not filters.sort.startswith("-") else key
        urls[key] = "?" + urlencode({**params, "sort": target})
        if active:
            ascending = lower_is_better != filters.sort.startswith("-")
            arrows[key] = "▲" if ascending else "▼"
    return urls, arrows


def chart_rows(rows: list[BoardRow]) -> list[dict]:
    """Medians with their p25–p75 for the side-by-side TTFT and decode charts."""
    return [
        {
            "slug": row.slug,
            "label": row.label,
            "provider": row.provider,
            "simulated": row.simulated,
            "ttft": [row.ttft_p25_ms, row.ttft_p50_ms, row.ttft_p75_ms],
            "decode": [row.decode_tps_p25, row.decode_tps_p50, row.decode_tps_p75],
        }
        for row in rows
        if row.has_data
    ]


def _endpoint_query(filters: BoardFilters) -> str:
    params = {k: v for k, v in filters.as_query().items() if k in ("workload", "window", "vantage")}
    return "?" + urlencode(params) if params else ""


@dashboard_view
@revalidated
def leaderboard_page(request: HttpRequest) -> HttpResponse:
    filters = BoardFilters.from_query(request.GET)
    rows = leaderboard(filters)
    urls, arrows = sort_links(filters)
    endpoint_query = _endpoint_query(filters)
    has_data = any(row.has_data for row in rows)
    # Every row's active alerts in one query, whatever the number of endpoints.
    alerts = open_alerts_by_endpoint(row.endpoint_id for row in rows)
    return render(
        request,
        "benchmarks/leaderboard.html",
        {
            "filters": filters,
            "form": FilterForm(filters),
            "rows": rows,
            # Each row's cells as markup built in Python (see board_cells, alert_badges).
            "table": [
                (
                    row,
                    row_cells_html(row, endpoint_query),
                    alert_cell_html(alerts.get(row.endpoint_id, []), row.slug),
                )
                for row in rows
            ],
            "alert_count": sum(len(found) for found in alerts.values()),
            "chart_rows": chart_rows(rows),
            "sort_urls": urls,
            "sort_arrows": arrows,
            "empty": empty_state(has_data=has_data),
            "params": filters.as_query(),
            # Links to endpoint pages keep the window, workload and vantage (not the sort).
            "endpoint_query": endpoint_query,
            "sort_keep": {"sort": filters.sort} if filters.sort != DEFAULT_SORT else {},
            "tod_label": BUCKETS.get(filters.tod_bucket),
            "long_context": next(
                (r.prefill_context_tokens for r in rows if r.prefill_context_tokens), None
            ),
        },
    )
