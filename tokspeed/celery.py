"""The Celery app. One beat process; workers consume their vantage's queue (`-Q eu-west`).

Made on first use, not when `tokspeed` is imported: a process that never sends a task
(`speedtest`, `simulate`) never loads Celery. Every module that defines or sends a task imports
`app` from here (tests/project/test_layout.py checks), so a task never meets Celery's fallback
app and its default broker.
"""

import os
from pathlib import Path
from typing import Any

from celery import Celery
from celery.schedules import crontab
from celery.signals import beat_init

from .state import broker_folders, ensure_folders, settle_secret

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")
settle_secret()  # DEBUG: the per-install secret every entry point shares

app = Celery("tokspeed")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def beat_schedule(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Settings' beat entries with each cron line ("*/5 * * * *") made Celery's crontab."""
    return {
        name: {**entry, "schedule": crontab.from_string(entry["schedule"])}
        if isinstance(entry["schedule"], str)
        else entry
        for name, entry in entries.items()
    }


@app.on_after_configure.connect
def make_beat_schedule(sender: Celery, **kwargs: object) -> None:
    """Settings describe beat's schedule in plain cron lines (reading them imports no Celery)."""
    sender.conf.beat_schedule = beat_schedule(sender.conf.beat_schedule)


@app.on_after_configure.connect
def make_broker_folders(sender: Celery, **kwargs: object) -> None:
    """The embedded broker's folders, made by the first process that sets the broker up."""
    if str(sender.conf.broker_url).startswith("filesystem"):
        ensure_folders(broker_folders(sender.conf.broker_transport_options or {}))


@beat_init.connect
def make_schedule_folder(sender: object, **kwargs: object) -> None:
    ensure_folders([Path(app.conf.beat_schedule_filename).parent])
