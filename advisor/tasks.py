"""Celery tasks of the advisor: keep the run digest in step with finished runs."""

from django.utils import timezone

from tokspeed.celery import app

from . import digest


@app.task(name="advisor.digest_run", acks_late=True, ignore_result=True)
def digest_run(run_id: int) -> None:
    """A run finished (benchmarks.finish asks by name): its endpoint-day is built again."""
    digest.digest_run(run_id)


@app.task(name="advisor.digest_recent", acks_late=True, ignore_result=True)
def digest_recent() -> None:
    """Hourly: the last two days built again, whatever messages were lost."""
    digest.digest_recent(now=timezone.now())
