"""The Celery app. One beat process; workers consume their vantage's queue (`-Q eu-west`)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

app = Celery("tokspeed")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
