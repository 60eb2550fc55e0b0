"""A circuit breaker per endpoint and vantage: do not spend a whole run on a provider that hangs.

The breaker is open when the last TOKSPEED_BREAKER_RUNS finished runs of an endpoint at a
vantage all failed by timeouts (every error sample a `timeout`, or a `stream_broken` stream
that went silent), or were themselves refused by the breaker. While it is open, a run first
sends one short request with a short idle timeout; only if that answers is the run measured.
State lives in the runs themselves: nothing to reset, and it closes by itself once a probe
answers and the run succeeds.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connections, router
from django.db.models import Exists, OuterRef

from providers.base import EndpointConfig, ErrorCategory
from providers.models import Endpoint, Provider
from providers.prompt import Prompt

from .clients import provider_client
from .measure import Limits, Measurement, measure_request
from .models import Run, RunStatus, Vantage

# Error categories that mean "the provider hung" (a silent stream ends as stream_broken).
TIMEOUTS = frozenset({ErrorCategory.TIMEOUT, ErrorCategory.STREAM_BROKEN})
REFUSED_PREFIX = "Circuit open:"


@dataclass(frozen=True, slots=True)
class Trip:
    """An open breaker: where, since when, and why (for the endpoint page)."""

    vantage: str
    since: datetime
    reason: str


def _timed_out(run: Run) -> bool:
    by_category = (run.summary or {}).get("errors_by_category")
    return _failed_by_timeout(run.status, run.failure_reason, by_category)


def _failed_by_timeout(status: str, failure_reason: str, by_category: Any) -> bool:
    """A run failed by timeouts: refused by the breaker, or every error sample's category
    (its summary's errors_by_category) a timeout."""
    if status != RunStatus.FAILED:
        return False
    if failure_reason.startswith(REFUSED_PREFIX):
        return True
    by_category = by_category or {}
    return bool(by_category) and set(by_category) <= TIMEOUTS


def trip(endpoint_id: int, vantage_id: int) -> Trip | None:
    """The open breaker of (endpoint, vantage), or None when it is closed."""
    needed = settings.TOKSPEED_BREAKER_RUNS
    if needed < 1:
        return None
    last = list(
        Run.objects.filter(endpoint_id=endpoint_id, vantage_id=vantage_id, status__in=Run.FINISHED)
        .select_related("vantage")
        .only("status", "failure_reason", "summary", "slot", "vantage__label")
        .order_by("-slot")[:needed]
    )
    if len(last) < needed or not all(_timed_out(run) for run in last):
        return None
    reason = f"the last {needed} runs failed by timeout"
    return Trip(vantage=last[0].vantage.label, since=last[-1].slot, reason=reason)


def open_trips(endpoint: Endpoint) -> list[Trip]:
    """Every open breaker of an endpoint, one per vantage it is measured from (by vantage
    slug): trip()'s rule over each vantage's last finished runs, read in one statement."""
    needed = settings.TOKSPEED_BREAKER_RUNS
    if needed < 1:
        return []
    database = connections[router.db_for_read(Run)]
    if database.vendor != "postgresql":
        return _open_trips_each(endpoint)
    run, vantage = (database.ops.quote_name(m._meta.db_table) for m in (Run, Vantage))
    # Table names from the models' meta; the values stay in params. Each vantage's newest
    # finished runs through the endpoint's (endpoint, workload, vantage, slot) rows.
    sql = (
        "SELECT v.id, v.label, r.status, r.failure_reason, r.categories, r.slot "  # noqa: S608
        f"FROM {vantage} v CROSS JOIN LATERAL (SELECT status, failure_reason, "
        f"summary -> 'errors_by_category' AS categories, slot FROM {run} "
        "WHERE endpoint_id = %s AND vantage_id = v.id AND status = ANY(%s) "
        "ORDER BY slot DESC LIMIT %s) r ORDER BY v.slug, r.slot DESC"
    )
    with database.cursor() as cursor:
        cursor.execute(sql, [endpoint.id, list(Run.FINISHED), needed])
        rows = cursor.fetchall()
    by_vantage: dict[int, list[tuple]] = {}
    for vantage_id, *last in rows:
        by_vantage.setdefault(vantage_id, []).append(last)
    trips = []
    for last in by_vantage.values():
        timed_out = (_failed_by_timeout(s, why, _json(c)) for _, s, why, c, _ in last)
        if len(last) == needed and all(timed_out):
            reason = f"the last {needed} runs failed by timeout"
            trips.append(Trip(vantage=last[0][0], since=last[-1][4], reason=reason))
    return trips


def _open_trips_each(endpoint: Endpoint) -> list[Trip]:
    """open_trips on another database (no LATERAL): trip() of each vantage with runs."""
    measured = Run.objects.filter(endpoint=endpoint, vantage=OuterRef("pk"))
    found = (trip(endpoint.id, vantage.id) for vantage in Vantage.objects.filter(Exists(measured)))
    return [each for each in found if each is not None]


def _json(value: str | None) -> Any:
    """A jsonb value as a raw cursor reads it (Django's PostgreSQL backend: its text)."""
    return None if value is None else json.loads(value)


def probe(
    config: EndpointConfig, *, prompt: str | Prompt, provider: Provider | None = None
) -> Measurement:
    """One short streamed request with a short idle timeout: does the endpoint answer at all?"""
    base = Limits.from_settings()
    limits = dc_replace(
        base,
        idle_timeout_s=min(base.idle_timeout_s, settings.TOKSPEED_BREAKER_PROBE_TIMEOUT_S),
        deadline_s=min(base.deadline_s, settings.TOKSPEED_BREAKER_PROBE_TIMEOUT_S * 2),
    )

    async def once() -> Measurement:
        async with provider_client(provider, limits=limits, max_connections=1) as client:
            return await measure_request(
                client,
                config,
                prompt=prompt,
                max_tokens=settings.TOKSPEED_BREAKER_PROBE_TOKENS,
                limits=limits,
            )

    return asyncio.run(once())


def refusal(measurement: Measurement, opened: Trip) -> str:
    """The failure reason of a run the breaker did not let through."""
    return (
        f"{REFUSED_PREFIX} {opened.reason}, and a short probe request failed too "
        f"({measurement.error_category}: {measurement.error_message[:200]}). "
        "The full run was not sent."
    )
