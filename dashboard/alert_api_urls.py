"""Alerts API, mounted at /api/v1/ (tokspeed/urls.py)."""

from rest_framework.routers import DefaultRouter

from .api.alerts import AlertViewSet
from .api.channels import ChannelViewSet

router = DefaultRouter()
router.include_format_suffixes = False
router.include_root_view = False  # dashboard.api_urls owns /api/v1/ itself
router.register("alerts", AlertViewSet, basename="alert")
router.register("channels", ChannelViewSet, basename="channel")

urlpatterns = router.urls
