"""Agent-loop page ("/agent-loop/"): projected wall time of N serial calls per endpoint."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from benchmarks.selectors import agent_loop
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import main_board

from ..caching import revalidated
from ..forms import AgentLoopForm, FilterForm
from .access import dashboard_view
from .agent_loop_html import loop_rows_html
from .empty import empty_state
from .listing import listed, wants_all

FIELDS = ("workload", "tod", "window", "vantage")


@dashboard_view
@revalidated
def agent_loop_page(request: HttpRequest) -> HttpResponse:
    filters = BoardFilters.from_query(request.GET)
    form = AgentLoopForm.from_query(request.GET)
    context = {
        "filters": filters,
        "form": form,
        "filter_form": FilterForm(filters, fields=FIELDS),
        "thresholds": agent_loop.THRESHOLDS,
        "params": filters.as_query(),
        "projections": [],
    }
    if not form.is_valid():
        # A calculator input out of range: 400, the page still usable, the field named.
        context["bad_fields"] = list(form.errors)
        return render(request, "dashboard/agent_loop.html", context, status=400)
    calls, tokens, tool_s = (form.cleaned_data[k] for k in ("calls", "tokens_per_call", "tool_s"))
    projections = agent_loop.project(
        main_board(filters), calls=calls, tokens_per_call=tokens, tool_s=tool_s
    )
    # The fastest PAGE_ROWS in the chart and the table (dashboard.views.listing), ranked over all.
    shown, all_rows_query = listed(request.GET, projections)
    context.update(
        calls=calls,
        tokens_per_call=tokens,
        tool_s=tool_s,
        projections=shown,
        # The table's rows, built in Python (agent_loop_html.loop_rows_html).
        table_rows=loop_rows_html(shown, tokens),
        projection_count=len(projections),
        all_rows_query=all_rows_query,
        rows_all=wants_all(request.GET),
        empty=empty_state(has_data=bool(projections)),
    )
    return render(request, "dashboard/agent_loop.html", context)
