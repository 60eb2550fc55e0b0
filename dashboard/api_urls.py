"""REST API v1, mounted at /api/v1/ (tokspeed/urls.py)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny
from rest_framework.routers import DefaultRouter

from .api.views.boards import AgentLoopView, LeaderboardCsvView, LeaderboardView
from .api.views.catalog import ScheduleViewSet, VantageViewSet, WorkloadViewSet
from .api.views.export import RunsCsvView, SamplesCsvView
from .api.views.providers import EndpointViewSet, ProviderViewSet
from .api.views.root import ApiRootView
from .api.views.runs import RunViewSet

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

# The API's description is public (it holds no data); its docs load assets from our static files.
_public = {"permission_classes": [AllowAny]}

urlpatterns = [
    path("", ApiRootView.as_view(), name="api-root"),
    path("leaderboard/", LeaderboardView.as_view(), name="api-leaderboard"),
    path("agent-loop/", AgentLoopView.as_view(), name="api-agent-loop"),
    path("export/leaderboard.csv", LeaderboardCsvView.as_view(), name="api-leaderboard-csv"),
    path("export/runs.csv", RunsCsvView.as_view(), name="api-export-runs"),
    path("export/samples.csv", SamplesCsvView.as_view(), name="api-export-samples"),
    path("schema/", SpectacularAPIView.as_view(**_public), name="api-schema"),
    path(
        "docs/",
        SpectacularSwaggerView.as_view(url_name="api-schema", **_public),
        name="api-docs",
    ),
    *router.urls,
]
