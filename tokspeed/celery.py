"""The Celery app. One beat process; workers consume their vantage's queue (`-Q eu-west`)."""

import os
from pathlib import Path

from celery import Celery
from celery.signals import beat_init

from .state import broker_folders, ensure_folders, settle_secret

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")
settle_secret()  # DEBUG: the per-install secret every entry point shares

app = Celery("tokspeed")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def make_broker_folders(sender: Celery, **kwargs: object) -> None:
    """The embedded broker's folders, made by the first process that sets the broker up."""
    if str(sender.conf.broker_url).startswith("filesystem"):
        ensure_folders(broker_folders(sender.conf.broker_transport_options or {}))


@beat_init.connect
def make_schedule_folder(sender: object, **kwargs: object) -> None:
    ensure_folders([Path(app.conf.beat_schedule_filename).parent])
