"""Leaderboard page ("/"): one row per endpoint, sortable, ties marked, filters in GET; by
model (filter or groups), a TTFT × decode scatter, and the providers not measured yet."""

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from alerts.pages.selectors import open_alerts_by_endpoint
from benchmarks.buckets import BUCKETS
from benchmarks.selectors.filters import DEFAULT_SORT, SORT_KEYS, BoardFilters
from benchmarks.selectors.lanes import lane_groups
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.selectors.rows import BoardRow
from providers.models import Endpoint, Provider

from ..alert_badges import alert_badges
from ..board_models import group_by_model, model_choices, only_model, parse_model_params
from ..caching import revalidated
from ..forms import FilterForm
from .access import dashboard_view
from .board_cells import cells
from .board_html import endpoint_url, row_html
from .empty import empty_state
from .listing import PAGE_ROWS, wants_all


def sort_links(filters: BoardFilters, extra: dict[str, str]) -> tuple[dict, dict]:
    """For each sortable column: the URL that sorts by it (best first, then reversed) and the
    current direction arrow."""
    params = {**filters.as_query(), **extra}
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
    """Medians with their p25–p75 for the TTFT and decode charts and the scatter."""
    return [
        {
            "slug": row.slug,
            "label": row.label,
            "provider": row.provider,
            "model": row.model_family,
            "simulated": row.simulated,
            "ttft": [row.ttft_p25_ms, row.ttft_p50_ms, row.ttft_p75_ms],
            "decode": [row.decode_tps_p25, row.decode_tps_p50, row.decode_tps_p75],
            "blended": row.blended_price_per_mtok,
        }
        for row in rows
        if row.has_data
    ]


def not_measured() -> list[Provider]:
    """Real providers switched off (their key variable is unset, or off in the admin), each with
    its endpoint_count: one constant statement, no queryset to build and compile each page."""
    return list(Provider.objects.raw(_NOT_MEASURED_SQL))


_NOT_MEASURED_SQL = f"""
SELECT p.*, COUNT(e.id) AS endpoint_count
FROM {Provider._meta.db_table} AS p JOIN {Endpoint._meta.db_table} AS e ON e.provider_id = p.id
WHERE NOT p.enabled AND NOT p.simulated AND p.archived_at IS NULL
GROUP BY p.id
ORDER BY p.name ASC
"""  # noqa: S608  (table names from the models; no value in the SQL)


def _endpoint_query(filters: BoardFilters) -> str:
    params = {k: v for k, v in filters.as_query().items() if k in ("workload", "window", "vantage")}
    return "?" + urlencode(params) if params else ""


def shown_rows(query, rows: list[BoardRow], *, group: str) -> tuple[list[BoardRow], bool]:
    """(the rows the page lists, whether they are all): the top PAGE_ROWS of the sort over every
    endpoint unless asked for all (listing.wants_all: 400 for a bad `rows`); grouped by model,
    every member of each group."""
    if wants_all(query) or group == "model" or len(rows) <= PAGE_ROWS:
        return rows, True
    return rows[:PAGE_ROWS], False


# A row without active alerts: an empty cell (its "more" link is written only when more > 0).
_NO_ALERTS = {"badges": [], "more": 0, "more_url": ""}


def _alerts_cell(alerts: dict[int, list], row: BoardRow) -> dict:
    found = alerts.get(row.endpoint_id)
    return alert_badges(found, row.slug) if found else _NO_ALERTS


@dashboard_view
@revalidated
def leaderboard_page(request: HttpRequest) -> HttpResponse:
    filters = BoardFilters.from_query(request.GET)
    every_row = leaderboard(filters)
    model, group = parse_model_params(request.GET, every_row)
    rows = only_model(every_row, model)
    listed, everything = shown_rows(request.GET, rows, group=group)
    extra = {k: v for k, v in (("model", model), ("group", group)) if v}
    if request.GET.get("rows") == "all":
        extra["rows"] = "all"
    urls, arrows = sort_links(filters, extra)
    has_data = any(row.has_data for row in rows)
    # Every listed row's active alerts in one query, whatever the number of endpoints.
    alerts = open_alerts_by_endpoint(row.endpoint_id for row in listed)
    # Links to endpoint pages keep the window, workload and vantage (not the sort).
    query, url_of = _endpoint_query(filters), endpoint_url()
    entries = {
        row.slug: row_html(row, cells(row), _alerts_cell(alerts, row), query, url_of)
        for row in listed
    }
    groups = group_by_model(listed) if group == "model" else [("", listed)]
    return render(
        request,
        "dashboard/leaderboard.html",
        {
            "filters": filters,
            "form": FilterForm(filters, models=model_choices(every_row), model=model, group=group),
            "rows": rows,
            "groups": [(name, [entries[row.slug] for row in members]) for name, members in groups],
            "alert_count": sum(len(found) for found in alerts.values()),
            "chart_rows": chart_rows(listed),
            "listed": len(listed),
            "all_rows_query": None
            if everything
            else urlencode({**filters.as_query(), **extra, "rows": "all"}),
            "sort_urls": urls,
            "sort_arrows": arrows,
            "empty": empty_state(has_data=has_data),
            "params": {**filters.as_query(), **extra},
            "csv_query": urlencode({**filters.as_query(), **({"model": model} if model else {})}),
            "sort_keep": {"sort": filters.sort} if filters.sort != DEFAULT_SORT else {},
            "tod_label": BUCKETS.get(filters.tod_bucket),
            "long_context": next(
                (r.prefill_context_tokens for r in rows if r.prefill_context_tokens), None
            ),
            "not_measured": not_measured(),
            "lanes": lane_groups(every_row),
        },
    )
