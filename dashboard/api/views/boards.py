"""The leaderboard and agent-loop projections: the dashboard's selectors, as JSON."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from alerts.pages.selectors import open_alerts_by_endpoint
from benchmarks.selectors import agent_loop
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard, main_board

from ...alert_badges import api_alerts
from ...board_models import only_model, parse_model_params
from ..export import CSVRenderer, leaderboard_csv
from ..money import rounded_rows
from ..params import StrictQueryMixin, float_param, int_param
from ..spliced import RENDERERS, Spliced, SplicingJSONRenderer, row_dicts
from .docs import (
    AGENT_LOOP_PARAMETERS,
    BOARD_PARAMETERS,
    MODEL_PARAMETER,
    WINDOW_BOUNDS_PARAMETERS,
)

BOARD_PARAMS = tuple(p.name for p in BOARD_PARAMETERS)
AGENT_PARAMS = tuple(p.name for p in AGENT_LOOP_PARAMETERS)
BOUNDS_PARAMS = tuple(p.name for p in WINDOW_BOUNDS_PARAMETERS)


def filters_out(filters: BoardFilters) -> dict[str, Any]:
    out = {**filters.as_dict(), "window": filters.window}
    if not filters.bounded:  # the since/until keys only where they were asked for
        del out["since"], out["until"]
    return out


def board_rows(
    request: Request, *, splice: bool = False
) -> tuple[BoardFilters, list[dict[str, Any]], list[bytes]]:
    """The leaderboard's rows for the query (filters, and optionally one model), as dicts, and
    with `splice` the figure texts their placeholders stand for (spliced.row_dicts)."""
    filters = BoardFilters.from_query(request.query_params)
    rows = leaderboard(filters, texts=splice)
    model, _ = parse_model_params(request.query_params, rows)
    rows = only_model(rows, model)
    alerts = open_alerts_by_endpoint(row.endpoint_id for row in rows)  # one query
    data, texts = row_dicts(rows, splice=splice)
    data = rounded_rows(data)
    for row, item in zip(rows, data, strict=True):  # alerts last, in place
        found = alerts.get(row.endpoint_id)
        item["alerts"] = api_alerts(found) if found else []
    return filters, data, texts


class LeaderboardView(StrictQueryMixin, APIView):
    query_params_allowed = (*BOARD_PARAMS, *BOUNDS_PARAMS, "model")
    renderer_classes = RENDERERS

    @extend_schema(
        parameters=[*BOARD_PARAMETERS, *WINDOW_BOUNDS_PARAMETERS, MODEL_PARAMETER],
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT)},
        summary="Leaderboard",
        description="One row per endpoint from run summaries in the window: TTFT, decode "
        "speed per user and e2e medians (p50 of per-run medians, with p25–p75 as the spread), "
        "prefill cost, decode at concurrency 1/10/peak, aggregate throughput (labelled as "
        "such), prices, cost per request, error rate. `saturated_runs` of `runs` (and "
        "`saturated_share`) counts the runs whose client was saturated (any saturated sample: "
        "their ITL tail is withheld, decode may read low); they stay in the medians, and "
        "`saturated_runs_c1` of `runs_c1` (and `_c10`, `_peak`) does the same for each decode "
        "@1/@10/@peak column. Rows whose intervals overlap the row "
        "above are marked `tie` and share its rank. `alerts` lists the endpoint's active "
        "(open or acknowledged) alerts, most severe first: id, kind, metric, severity, status, "
        "shift (worse-oriented fraction), workload, vantage, since; details at "
        "/api/v1/alerts/{id}/. `blended_price_per_mtok` weighs input 3 : output 1; "
        "`model_family` groups the same model across providers (filter with `model`). The same "
        "selector feeds the dashboard; /api/v1/export/leaderboard.csv gives these rows as CSV.",
    )
    def get(self, request: Request) -> Response:
        renderer = request.accepted_renderer
        splice = isinstance(renderer, SplicingJSONRenderer) and renderer.splices(
            request.accepted_media_type, self.get_renderer_context()
        )
        filters, rows, texts = board_rows(request, splice=splice)
        return Response(Spliced({"filters": filters_out(filters), "rows": rows}, texts=texts))


class LeaderboardCsvView(StrictQueryMixin, APIView):
    query_params_allowed = (*BOARD_PARAMS, *BOUNDS_PARAMS, "model")
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[*BOARD_PARAMETERS, *WINDOW_BOUNDS_PARAMETERS, MODEL_PARAMETER],
        responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR)},
        summary="Leaderboard as CSV",
        description="The leaderboard's rows (same filters and columns as /api/v1/leaderboard/, "
        "without the alerts list), one line per endpoint in the board's order.",
    )
    def get(self, request: Request):
        _, rows, _ = board_rows(request)
        return leaderboard_csv(rows)


class AgentLoopView(StrictQueryMixin, APIView):
    query_params_allowed = BOARD_PARAMS + AGENT_PARAMS

    @extend_schema(
        parameters=BOARD_PARAMETERS + AGENT_LOOP_PARAMETERS,
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT)},
        summary="Agent-loop projections",
        description="Projected wall time of `calls` serial calls per endpoint: calls × (TTFT + "
        "tokens_per_call ÷ decode speed) + calls × tool_s, from the leaderboard's medians "
        "(same filters), fastest first, with a best/worst range from the quartiles; "
        "`saturated_runs` of `runs` were measured with a saturated client. Under 1 s "
        "feels immediate, under 10 s holds attention, beyond that it is a background job.",
    )
    def get(self, request: Request) -> Response:
        query = request.query_params
        calls = int_param(
            query,
            "calls",
            default=agent_loop.DEFAULT_CALLS,
            minimum=1,
            maximum=agent_loop.MAX_CALLS,
        )
        tokens = int_param(
            query,
            "tokens_per_call",
            default=agent_loop.DEFAULT_TOKENS_PER_CALL,
            minimum=1,
            maximum=agent_loop.MAX_TOKENS_PER_CALL,
        )
        tool_s = float_param(
            query,
            "tool_s",
            default=agent_loop.DEFAULT_TOOL_S,
            minimum=0,
            maximum=agent_loop.MAX_TOOL_S,
        )
        filters = BoardFilters.from_query(query)
        projections = agent_loop.project(
            main_board(filters), calls=calls, tokens_per_call=tokens, tool_s=tool_s
        )
        return Response(
            {
                "filters": filters_out(filters),
                "calls": calls,
                "tokens_per_call": tokens,
                "tool_s": tool_s,
                "thresholds_s": agent_loop.THRESHOLDS,
                "projections": rounded_rows(projections),
            }
        )
