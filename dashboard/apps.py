from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """Everything a person or a client sees: pages, the REST API, forms, URLs, static files."""

    name = "dashboard"
    verbose_name = "Dashboard"
