"""tokspeed. The Celery app (`tokspeed.celery`) is made when a module that defines or sends a
task imports it, not here: reading settings and running `speedtest` load no Celery."""

from typing import Any

__all__ = ["celery_app"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """`tokspeed.celery_app`, made on first use (Celery's usual spelling for `-A tokspeed`)."""
    if name == "celery_app":
        from .celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
