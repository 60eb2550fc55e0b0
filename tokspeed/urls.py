from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("health/", include("dashboard.health_urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("dashboard.api_urls")),
    path("api/v1/", include("dashboard.alert_api_urls")),
    path("alerts/", include("dashboard.alert_urls")),
    path("", include("dashboard.urls")),
    # Transitional: alerts/delivery/advice_changes.py still reverses "benchmarks:advisor_profile"
    # (its owner moves it to "dashboard:" with the one outbox, issue 31); delete this line then.
    # It comes last, so every request resolves to the "dashboard" namespace.
    path("", include(("dashboard.urls", "benchmarks"), namespace="benchmarks")),
]
