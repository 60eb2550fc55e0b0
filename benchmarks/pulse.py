"""Signs of life for /health/: beat's tick writes one (dispatch.tick); each worker writes its own.

A worker's pulse is written from a thread of the worker's main process every PULSE_S seconds,
so an idle worker (no run to execute) still shows as alive. The thread closes its database
connection after each write: a pool process forked meanwhile inherits no open connection.
"""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connection
from django.utils import timezone

from .models import Pulse

log = logging.getLogger(__name__)

PULSE_S = 30.0
WORKER = "worker"


def beat(name: str, *, kind: str, detail: str = "") -> None:
    Pulse.objects.update_or_create(
        name=name[:200], defaults={"kind": kind, "seen_at": timezone.now(), "detail": detail[:300]}
    )


def start_worker_pulse(hostname: str, queues: list[str]) -> threading.Event:
    """Beat for worker `hostname` until the returned event is set (at worker shutdown)."""
    stop = threading.Event()
    detail = "queues: " + ", ".join(sorted(queues))

    def loop() -> None:
        while True:
            try:
                beat(hostname, kind=WORKER, detail=detail)
            except DatabaseError as exc:  # the database is away: try again next time
                log.warning("worker pulse not written: %s", exc)
            finally:
                connection.close()
            if stop.wait(PULSE_S):
                return

    threading.Thread(target=loop, name="tokspeed-pulse", daemon=True).start()
    return stop
