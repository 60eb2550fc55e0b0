"""/health/ for load balancers and uptime checks (mounted in tokspeed/urls.py by dotted path)."""

from django.urls import path

from .views.health import health_view

urlpatterns = [path("", health_view, name="health")]
