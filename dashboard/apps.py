from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """Everything a person or a client sees: pages, the REST API, forms, URLs, static files."""

    name = "dashboard"
    verbose_name = "Dashboard"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from alerts.models import Alert, ChangePoint
        from benchmarks.models import Schedule, Vantage, Workload
        from providers.models import Endpoint, Provider

        from .caching import bump_catalogue

        # What every board and page shows besides runs: edits retire cached responses.
        for model in (Provider, Endpoint, Workload, Vantage, Schedule):
            post_save.connect(bump_catalogue, sender=model, dispatch_uid=f"cache-{model.__name__}")
            post_delete.connect(
                bump_catalogue, sender=model, dispatch_uid=f"cache-del-{model.__name__}"
            )
        # Alerts and change points: a write moves their newest stamp (caching.validator); a
        # deletion does not, so it retires cached responses here.
        for model in (Alert, ChangePoint):
            post_delete.connect(
                bump_catalogue, sender=model, dispatch_uid=f"cache-del-{model.__name__}"
            )
