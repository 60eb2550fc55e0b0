"""Reads that may go to a read replica (DATABASE_REPLICA_URL), writes always to the primary.

Nothing goes to the replica unless asked: code that only reads and can live with a replica's
few seconds of lag wraps itself in `replica_reads()` (the dashboard does that for its read-only
pages and API, dashboard/middleware.py). Everything else — workers, admin, pages that show what
was just written — reads the primary, so a user never misses their own write.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

PRIMARY = "default"
REPLICA = "replica"
# Only measurement data is read from the replica; sessions, users, login attempts and the
# database cache (throttle counters) are read where they are written.
REPLICA_APPS = frozenset({"providers", "benchmarks", "alerts", "advisor"})

# Per thread (gthread workers) and per task: a context variable, never a global.
_use_replica: ContextVar[bool] = ContextVar("tokspeed_use_replica", default=False)


def set_replica_reads(on: bool) -> None:
    """Route this context's reads from now on (a request sets it once, for its whole life,
    including a streamed body read after the view returned)."""
    _use_replica.set(on)


@contextmanager
def replica_reads(on: bool = True) -> Iterator[None]:
    token = _use_replica.set(on)
    try:
        yield
    finally:
        _use_replica.reset(token)


class ReplicaRouter:
    """Installed only when DATABASE_REPLICA_URL is set (settings.DATABASE_ROUTERS)."""

    def db_for_read(self, model: type, **hints: Any) -> str:
        if _use_replica.get() and model._meta.app_label in REPLICA_APPS:
            return REPLICA
        return PRIMARY

    def db_for_write(self, model: type, **hints: Any) -> str:
        return PRIMARY

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # one database, two doors

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == PRIMARY  # the replica follows the primary's schema by replication
