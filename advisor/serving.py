"""Serving the advice to pollers: a cached answer keyed by the data it stands on.

A router polls every minute; the advice only changes when a run finishes, so the answer is
computed once per (question, data version) and reused. The data version is read from indexes
in two cheap queries: the newest run id, and the ids of runs not yet finished (a run finishing
leaves that set). A ten-minute clock bucket lets the window slide and the staleness warning age.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, Sum
from django.utils import timezone

from benchmarks.models import Run, RunStatus

CACHE_SECONDS = 600
CLOCK_BUCKET_S = 600


def data_version(now: datetime) -> str:
    newest = Run.objects.aggregate(newest=Max("id"))["newest"]
    pending = Run.objects.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).aggregate(
        n=Count("id"), ids=Sum("id")
    )
    return f"{newest}:{pending['n']}:{pending['ids']}:{int(now.timestamp()) // CLOCK_BUCKET_S}"


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
