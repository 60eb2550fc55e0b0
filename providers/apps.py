from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "providers"
    verbose_name = "Providers and endpoints"

    def ready(self) -> None:
        # The project's own system checks (providers is the lowest app; tokspeed is not one).
        from tokspeed import checks  # noqa: F401
