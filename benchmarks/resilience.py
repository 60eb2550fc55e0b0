"""Riding out a database that goes away for a while (a restart, a failover, killed backends).

`retry_db(fn)` calls `fn` until it succeeds; when the connection is lost it drops the broken
connection, waits with capped exponential backoff and calls again, for up to
TOKSPEED_DB_OUTAGE_S seconds (default 90: a restart of up to a minute plus slack). Only
idempotent work belongs in `fn` (conditional UPDATEs, inserts that ignore conflicts), and never
inside an outer transaction: a transaction cut by a lost connection cannot be resumed, only
redone from the start by its caller.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

log = logging.getLogger(__name__)

T = TypeVar("T")
BACKOFF_FIRST_S = 0.25
BACKOFF_MAX_S = 8.0
# What a lost or refused connection raises (psycopg's errors arrive wrapped in these).
DISCONNECTS = (OperationalError, InterfaceError)


def backoff_s(attempt: int) -> float:
    """Seconds to wait before attempt `attempt + 1` (attempt 1 failed first): 0.25, 0.5 … 8."""
    return min(BACKOFF_FIRST_S * 2 ** (attempt - 1), BACKOFF_MAX_S)


def drop_connection() -> None:
    """Forget this thread's database connection, so the next query opens a new one."""
    try:
        connection.close()
    except DISCONNECTS:
        pass
    # close() leaves a connection that failed mid-transaction marked; clear it for a new start.
    connection.needs_rollback = False


def retry_db(
    fn: Callable[[], T],
    *,
    what: str,
    budget_s: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """fn(), retried across lost connections for up to `budget_s` seconds; re-raises after."""
    if connection.in_atomic_block:
        return fn()  # the caller's transaction is gone with the connection: it must redo it
    budget = settings.TOKSPEED_DB_OUTAGE_S if budget_s is None else budget_s
    deadline = time.monotonic() + budget
    attempt = 0
    while True:
        attempt += 1
        try:
            return fn()
        except DISCONNECTS as exc:
            wait = backoff_s(attempt)
            if time.monotonic() + wait > deadline:
                log.error("%s: database still unreachable after %d attempts", what, attempt)
                raise
            log.warning("%s: database unreachable (%s); retry in %.2f s", what, exc, wait)
            drop_connection()
            sleep(wait)
