"""REST API v1, mounted at /api/v1/ (tokspeed/urls.py)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny
from rest_framework.routers import DefaultRouter

from .api.schema import cached_schema
from .api.views.advice import AdviceView
from .api.views.boards import AgentLoopView, LeaderboardCsvView, LeaderboardView
from .api.views.catalog import ScheduleViewSet, VantageViewSet, WorkloadViewSet
from .api.views.export import (
    ExportDetailView,
    ExportDownloadView,
    ExportListView,
    RunsCsvView,
    SamplesCsvView,
)
from .api.views.providers import EndpointViewSet, ProviderViewSet
from .api.views.root import ApiRootView
from .api.views.runs import RunViewSet
from .caching import revalidated

router = DefaultRouter()
# No ".json" suffix routes: ids and slugs own everything up to the next slash.
router.include_format_suffixes = False
router.include_root_view = False  # ApiRootView lists every resource, not only the router's
router.register("providers", ProviderViewSet, basename="provider")
router.register("endpoints", EndpointViewSet, basename="endpoint")
router.register("workloads", WorkloadViewSet, basename="workload")
router.register("schedules", ScheduleViewSet, basename="schedule")
router.register("vantages", VantageViewSet, basename="vantage")
router.register("runs", RunViewSet, basename="run")

# The API's description is public and unthrottled (it holds no data and touches no database);
# its docs load assets from our static files.
_public = {"permission_classes": [AllowAny], "throttle_classes": []}

urlpatterns = [
    path("", ApiRootView.as_view(), name="api-root"),
    path("leaderboard/", revalidated(LeaderboardView.as_view()), name="api-leaderboard"),
    path("agent-loop/", revalidated(AgentLoopView.as_view()), name="api-agent-loop"),
    # Before the router's own route for it: the same action, revalidated and cached.
    path(
        "endpoints/<slug:slug>/history/",
        revalidated(EndpointViewSet.as_view({"get": "history"}, **EndpointViewSet.history.kwargs)),
        name="endpoint-history",
    ),
    path("advice/", AdviceView.as_view(), name="api-advice"),
    path("export/leaderboard.csv", LeaderboardCsvView.as_view(), name="api-leaderboard-csv"),
    path("export/runs.csv", RunsCsvView.as_view(), name="api-export-runs"),
    path("export/samples.csv", SamplesCsvView.as_view(), name="api-export-samples"),
    path("exports/", ExportListView.as_view(), name="api-exports"),
    path("exports/<uuid:token>/", ExportDetailView.as_view(), name="api-export"),
    path(
        "exports/<uuid:token>/download",
        ExportDownloadView.as_view(),
        name="api-export-download",
    ),
    # The schema takes seconds to generate and only changes with the code: made once per process
    # (the docs page showed "LOADING" for 3–5 s on every visit).
    path("schema/", cached_schema(SpectacularAPIView.as_view(**_public)), name="api-schema"),
    path(
        "docs/",
        SpectacularSwaggerView.as_view(url_name="api-schema", **_public),
        name="api-docs",
    ),
    *router.urls,
]
