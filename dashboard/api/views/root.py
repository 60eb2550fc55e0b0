"""GET /api/v1/: every resource of the API with its URL, so a client starts from one place."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

# name -> (URL name, what it is). Detail routes are listed with a {placeholder}.
RESOURCES = {
    "leaderboard": ("api-leaderboard", "One row per endpoint: TTFT, decode, prices, errors."),
    "leaderboard_csv": ("api-leaderboard-csv", "The leaderboard's rows as CSV."),
    "agent_loop": ("api-agent-loop", "Projected wall time and cost of serial agent calls."),
    "providers": ("provider-list", "Vendors or servers speaking one wire protocol."),
    "endpoints": ("endpoint-list", "Models served by providers."),
    "workloads": ("workload-list", "What a run sends."),
    "schedules": ("schedule-list", "When runs happen."),
    "vantages": ("vantage-list", "Where requests are sent from."),
    "runs": ("run-list", "Runs and their summaries; POST queues one."),
    "alerts": ("alert-list", "Regressions and outages; actions on them."),
    "advice": ("api-advice", "Which endpoint to route a workload to (a profile or ad hoc)."),
    "exports": ("api-exports", "Large CSV exports made in the background; POST starts one."),
    "runs_csv": ("api-export-runs", "Runs as CSV."),
    "samples_csv": ("api-export-samples", "Every request of the runs as CSV."),
    "schema": ("api-schema", "OpenAPI schema."),
    "docs": ("api-docs", "Interactive API documentation."),
}
# Per-endpoint and per-run resources: the list URL plus a path template.
DETAIL_TEMPLATES = {
    "endpoint_history": "endpoints/{slug}/history/",
    "endpoint_test": "endpoints/{slug}/test/",
    "run_samples": "runs/{id}/samples/",
}


class ApiRootView(APIView):
    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        base = reverse("api-root", request=request)
        resources = {
            name: {"url": reverse(url_name, request=request), "description": description}
            for name, (url_name, description) in RESOURCES.items()
        }
        resources.update({name: {"url": base + path} for name, path in DETAIL_TEMPLATES.items()})
        return Response(resources)
