"""The outbox part of /health/: alert emails waiting longer than ALERTS_HEALTH_BACKLOG_S."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from alerts.delivery.outbox import backlog
from benchmarks.health import Check


def outbox(now: datetime) -> Check:
    waiting = backlog()
    if not waiting.count:
        return Check("outbox", True, "no email waiting")
    age = waiting.age_s(now)
    detail = f"{waiting.count} email(s) waiting, oldest {age:.0f} s"
    return Check("outbox", age <= settings.ALERTS_HEALTH_BACKLOG_S, detail)
