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
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from datetime import datetime

from django.conf import settings
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
    if run.status != RunStatus.FAILED:
        return False
    if run.failure_reason.startswith(REFUSED_PREFIX):
        return True
    by_category = (run.summary or {}).get("errors_by_category") or {}
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
    """Every open breaker of an endpoint, one per vantage it is measured from."""
    # EXISTS stops at a vantage's first run (a DISTINCT join read every run of the endpoint).
    measured = Run.objects.filter(endpoint=endpoint, vantage=OuterRef("pk"))
    vantages = Vantage.objects.filter(Exists(measured))
    found = (trip(endpoint.id, vantage.id) for vantage in vantages)
    return [each for each in found if each is not None]


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
