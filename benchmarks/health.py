"""Is tokspeed itself well? The checks behind /health/ (the view lives in dashboard/).

Each check answers ok or not with a short, public detail: no host names, URLs or credentials,
since /health/ needs no login (load balancers and uptime checks call it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connection

from tokspeed.celery import app as celery_app

from .models import Pulse, Run, RunStatus
from .pulse import WORKER

BROKER_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


def _ago(now: datetime, then: datetime) -> str:
    return f"{max((now - then).total_seconds(), 0):.0f} s ago"


def database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return Check("database", False, "unreachable")
    return Check("database", True, "reachable")


def broker() -> Check:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_S)
    except Exception:  # any failure to connect is the answer; its text may name the host
        return Check("broker", False, "unreachable")
    return Check("broker", True, "reachable")


def beat(now: datetime) -> Check:
    limit = timedelta(seconds=settings.TOKSPEED_HEALTH_TICK_S)
    last = Pulse.objects.filter(name=Pulse.TICK).values_list("seen_at", flat=True).first()
    if last is None:
        return Check("beat", False, "no tick has run yet")
    return Check("beat", now - last <= limit, f"last tick {_ago(now, last)}")


def queue(now: datetime) -> Check:
    limit = timedelta(seconds=settings.TOKSPEED_HEALTH_QUEUED_S)
    oldest = (
        Run.objects.filter(status=RunStatus.QUEUED, slot__lte=now)
        .order_by("slot")
        .values_list("slot", flat=True)
        .first()
    )
    if oldest is None:
        return Check("queue", True, "no run waiting")
    return Check("queue", now - oldest <= limit, f"oldest queued run due {_ago(now, oldest)}")


def workers(now: datetime) -> Check:
    recent = now - timedelta(seconds=settings.TOKSPEED_HEALTH_WORKER_S)
    seen = Pulse.objects.filter(kind=WORKER, seen_at__gte=recent).count()
    window = settings.TOKSPEED_HEALTH_WORKER_S
    return Check("workers", seen > 0, f"{seen} seen in the last {window} s")


def checks(now: datetime) -> list[Check]:
    """Every check; with the database down only that one is reported (the rest need it)."""
    db = database()
    if not db.ok:
        return [db, broker()]
    return [db, broker(), beat(now), queue(now), workers(now)]
