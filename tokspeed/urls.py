from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("benchmarks.api_urls")),
    path("api/v1/", include("alerts.api_urls")),
    path("alerts/", include("alerts.urls")),
    path("", include("benchmarks.urls")),
]
