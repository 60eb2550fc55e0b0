from django.contrib import admin
from django.urls import include, path

# settings install SimpleAdminConfig: the admin modules load here, with the URLs, not in every
# process that sets Django up (speedtest, Celery workers).
admin.autodiscover()

urlpatterns = [
    path("health/", include("dashboard.health_urls")),
    path("metrics", include("dashboard.metrics_urls")),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("dashboard.api_urls")),
    path("api/v1/", include("dashboard.alert_api_urls")),
    path("api/", include("dashboard.api_not_found_urls")),  # after every API route: JSON 404
    path("alerts/", include("dashboard.alert_urls")),
    path("", include("dashboard.urls")),
]

# A database outage answers 503 with Retry-After instead of 500 (dashboard/views/errors.py).
handler500 = "dashboard.views.errors.server_error"
