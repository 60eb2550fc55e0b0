from datetime import datetime

from django.apps import AppConfig


class AdvisorConfig(AppConfig):
    name = "advisor"
    verbose_name = "Routing advisor"

    def ready(self) -> None:
        from benchmarks.derived import register

        register(
            "advisor-digest",
            _rebuild_digest,
            description="the advisor's run digest: each endpoint-day's runs packed for advice",
        )


def _rebuild_digest(now: datetime) -> int:
    from .digest import rebuild

    return rebuild(now=now)
