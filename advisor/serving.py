"""Serving the advice to pollers: a cached answer keyed by the data it stands on.

A router polls every minute; the advice only changes when a run finishes, so the answer is
computed once per (question, data version) and reused. The data version is read from indexes
in one cheap statement: the newest run id, and the ids of runs not yet finished (a run finishing
leaves that set). A ten-minute clock bucket lets the window slide and the staleness warning age.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db import connections, router
from django.utils import timezone

from benchmarks.models import Run, RunStatus

CACHE_SECONDS = 600
CLOCK_BUCKET_S = 600


# The newest run id, and the count and sum of the ids of runs not yet finished: one statement
# (two ORM aggregates cost 1.9 ms of CPU a cold advice, this 0.6 ms; both read indexes only).
VERSION = (
    "SELECT (SELECT MAX(id) FROM {runs}), COUNT(id), SUM(id) FROM {runs} WHERE status IN (%s, %s)"
)


def data_version(now: datetime) -> str:
    alias = router.db_for_read(Run)
    with connections[alias].cursor() as cursor:
        cursor.execute(
            VERSION.format(runs=connections[alias].ops.quote_name(Run._meta.db_table)),
            [RunStatus.QUEUED.value, RunStatus.RUNNING.value],
        )
        newest, pending, ids = cursor.fetchone()
    ids = None if ids is None else int(ids)  # PostgreSQL sums bigints as numeric
    return f"{newest}:{pending}:{ids}:{int(now.timestamp()) // CLOCK_BUCKET_S}"


def etag_of(payload: Any) -> str:
    body = json.dumps(payload, sort_keys=True, default=str).encode()
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def cached(
    question: dict[str, Any], compute: Callable[[], Any], *, now: datetime | None = None
) -> tuple[Any, str]:
    """(payload, ETag) for a question (any JSON-able dict), computed at most once per data
    version."""
    now = now or timezone.now()
    key_source = json.dumps({"q": question, "v": data_version(now)}, sort_keys=True, default=str)
    key = "advisor:" + hashlib.sha256(key_source.encode()).hexdigest()
    hit = cache.get(key)
    if hit is not None:
        return hit
    payload = compute()
    answer = (payload, etag_of(payload))
    cache.set(key, answer, CACHE_SECONDS)
    return answer
