"""Celery tasks of the dashboard: background exports (thin: IDs in, one service call)."""

from datetime import timedelta

from django.utils import timezone

from tokspeed.celery import app

from .api.throttling import forget_ended_windows
from .exports import jobs


@app.task(name="dashboard.build_export", acks_late=True, ignore_result=True)
def build_export(export_id: int) -> None:
    jobs.build(export_id)


@app.task(name="dashboard.exports_housekeeping", ignore_result=True)
def exports_housekeeping() -> None:
    """Build exports whose message was lost; delete expired ones."""
    for export_id in jobs.pending(older_than=timezone.now() - timedelta(minutes=5)):
        jobs.build(export_id)
    jobs.expire()


@app.task(name="dashboard.forget_throttle_windows", ignore_result=True)
def forget_throttle_windows() -> None:
    """Delete the API throttle's counters of ended windows (no Redis: one row each)."""
    forget_ended_windows()
