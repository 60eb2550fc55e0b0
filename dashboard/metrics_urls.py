"""/metrics for Prometheus (mounted in tokspeed/urls.py by dotted path)."""

from django.urls import path

from .views.metrics import metrics_view

urlpatterns = [path("", metrics_view, name="metrics")]
