"""Runs list ("/runs/"): every run, newest first, filtered, paged by keyset.

Older/newer links carry a cursor naming a (slot, id) position (dashboard/api/keyset.py, the
API's own), so a page costs one short index range however deep it is, and a link keeps
showing the same runs while new ones arrive at the top.
"""

from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..api.keyset import NEWER, OLDER, encode_cursor, keyset_page, parse_cursor
from ..run_filters import FILTER_NAMES, TIME_NAMES, bound_form, matching_runs
from ..run_rows import run_rows_html
from .access import dashboard_view

PAGE_SIZE = 50
ALLOWED = frozenset({*FILTER_NAMES, *TIME_NAMES, "cursor"})
# The list never shows the summary JSON (about 1.7 kB a run): leave it in the table.
LIST_COLUMNS_DEFERRED = ("summary",)


def check_query(query) -> None:
    """Unknown or repeated parameters are a 400: a typo must not silently widen the list."""
    errors = {}
    for name, values in query.lists():
        if name not in ALLOWED:
            errors[name] = [f"Unknown parameter; this page takes: {', '.join(sorted(ALLOWED))}."]
        elif len(values) > 1:
            errors[name] = ["Give this parameter once."]
    if errors:
        raise ValidationError(errors)


@dashboard_view
def runs_page(request: HttpRequest) -> HttpResponse:
    check_query(request.GET)
    form = bound_form(request.GET)
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    direction, position = OLDER, None
    if raw := request.GET.get("cursor"):
        try:
            direction, slot, run_id = parse_cursor(raw)
        except ValueError:
            raise ValidationError(
                {"cursor": ["Not a link from this page; follow “Older” or “Newer”."]}
            ) from None
        position = (slot, run_id)
    runs = (
        matching_runs(form.api_filters())
        .select_related("endpoint__provider", "workload", "vantage")
        .defer(*LIST_COLUMNS_DEFERRED)
    )
    found = keyset_page(runs, direction=direction, position=position, size=PAGE_SIZE)
    params = form.page_filters()
    return render(
        request,
        "dashboard/runs.html",
        {
            "form": form,
            "runs": found.runs,
            "rows": run_rows_html(found.runs),
            "params": params,
            "filtered": bool(params),
            "paged": position is not None,
            "older_url": _page_url(params, OLDER, found.runs[-1])
            if found.has_older and found.runs
            else None,
            "newer_url": _page_url(params, NEWER, found.runs[0])
            if found.has_newer and found.runs
            else None,
            "csv_query": urlencode(form.api_filters()),
            "stream_max_rows": settings.TOKSPEED_EXPORT_STREAM_MAX_ROWS,
        },
    )


def _page_url(params: dict[str, str], direction: str, run) -> str:
    return "?" + urlencode({**params, "cursor": encode_cursor(direction, run.slot, run.id)})
