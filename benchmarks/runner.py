"""Executing one run: claim it, stream repetitions × concurrency requests, store, summarize.

A run is claimed with a conditional UPDATE that also counts the attempt. A redelivered task
(its worker died) takes a run over once the run's heartbeat is older than the lease, and measures
only the samples the run still lacks. Provider errors are samples; a missing API key is a failed
run with a clear reason. Nothing here raises for a provider's behaviour.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from datetime import timedelta

import httpx
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import DateTimeField, F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

import tokspeed
from providers.base import EndpointConfig
from providers.config import MissingKey, endpoint_config
from providers.models import Endpoint

from . import breaker
from .clients import network_for
from .finish import finish_run
from .measure import Limits, Measurement, Network, make_client, measure_burst
from .models import Run, RunStatus
from .prompts import ContextRuler, WorkloadText, prompt_chars
from .resilience import DISCONNECTS, retry_db
from .sample_writer import SampleWriter
from .validators import workload_ceiling_errors
from .withheld import Withheld

log = logging.getLogger(__name__)

CLIENT_VERSION = f"tokspeed {tokspeed.__version__} httpx {httpx.__version__}"
# What execute() returns besides a final run status.
BUSY = "busy"  # another worker holds a fresh lease: try again later
WAIT = "wait"  # another run of the same endpoint and slot is in flight: try again soon
ALREADY_ENDED = "ended"  # already finished (or skipped): nothing to do
MISSING = "missing"  # deleted since it was queued
TAKEN_OVER = "taken-over"  # this worker went silent and another one resumed the run


class LeaseLost(Exception):
    """Another attempt owns the run now; this one must stop without writing a summary."""


@dataclass(slots=True)
class Claim:
    outcome: str  # "claimed", BUSY, WAIT, ALREADY_ENDED or MISSING
    run: Run | None = None


def claim_run(run_id: int, *, worker: str) -> Claim:
    """Make this worker the run's executor if it is queued, or running but silent past its lease.

    An endpoint has one run in flight per vantage: while another run of it holds a fresh lease,
    a run of the same slot (another workload) or one a person asked for (no schedule: run_now,
    the API, the admin) waits (WAIT), and a scheduled run of a later slot is skipped with a
    reason, so a stalling provider never piles its scheduled runs onto every worker.
    """
    return retry_db(lambda: _claim_once(run_id, worker=worker), what=f"claiming run {run_id}")


def _claim_once(run_id: int, *, worker: str) -> Claim:
    with transaction.atomic():
        target = (
            Run.objects.filter(id=run_id)
            .values("endpoint_id", "vantage_id", "slot", "schedule_id")
            .first()
        )
        if target is None:
            return Claim(MISSING)
        # The endpoint's row lock serialises claims of its runs: two workers never both see
        # "nothing in flight" and start at once.
        list(Endpoint.objects.select_for_update().filter(id=target["endpoint_id"]).only("id"))
        fresh = timezone.now() - timedelta(seconds=settings.TOKSPEED_RUN_LEASE_S)
        in_flight = (
            Run.objects.filter(
                endpoint_id=target["endpoint_id"],
                vantage_id=target["vantage_id"],
                status=RunStatus.RUNNING,
                heartbeat_at__gte=fresh,
            )
            .exclude(id=run_id)
            .only("id", "slot")
            .first()
        )
        if in_flight is not None:
            if target["schedule_id"] is None:
                return Claim(WAIT)  # asked for by a person: after the one in flight, not never
            return _held_back(run_id, target["slot"], in_flight)
        return _claim(run_id, worker=worker)


def _held_back(run_id: int, slot, in_flight: Run) -> Claim:
    """Wait behind a run of the same slot; behind an earlier slot's run, wait while this slot
    is within its lateness budget. A run whose worker is gone stops heartbeating and stops
    holding anything back after the lease (60 s), inside the budget (90 s): only a run that is
    really still streaming makes a later slot skip."""
    if in_flight.slot >= slot:
        return Claim(WAIT)
    late_s = (timezone.now() - slot).total_seconds()
    if late_s < settings.TOKSPEED_RUN_LATE_S:
        return Claim(WAIT)
    reason = (
        f"Skipped: run {in_flight.id} of this endpoint (slot {in_flight.slot:%Y-%m-%d %H:%M} UTC) "
        f"was still in flight, heartbeating, {late_s:.0f} s after this slot; an endpoint has "
        "one run at a time."
    )
    skipped = Run.objects.filter(id=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.SKIPPED, failure_reason=reason, finished_at=timezone.now()
    )
    return Claim(ALREADY_ENDED if skipped else WAIT)


def _claim(run_id: int, *, worker: str) -> Claim:
    now = timezone.now()
    silent = now - timedelta(seconds=settings.TOKSPEED_RUN_LEASE_S)
    claimable = (
        Q(status=RunStatus.QUEUED)
        | Q(status=RunStatus.RUNNING, heartbeat_at__lt=silent)
        | Q(status=RunStatus.RUNNING, heartbeat_at__isnull=True)
    )
    claimed = Run.objects.filter(claimable, id=run_id).update(
        status=RunStatus.RUNNING,
        heartbeat_at=now,
        started_at=Coalesce("started_at", Value(now, output_field=DateTimeField())),
        attempts=F("attempts") + 1,
        worker=worker[:200],
        client_version=CLIENT_VERSION,
    )
    run = (
        Run.objects.select_related("endpoint__provider", "workload", "vantage")
        .filter(id=run_id)
        .first()
    )
    if run is None:
        return Claim(MISSING)
    if claimed:
        return Claim("claimed", run)
    return Claim(BUSY if run.status == RunStatus.RUNNING else ALREADY_ENDED, run)


def execute(run_id: int, *, worker: str = "") -> str:
    """Execute (or resume) a run; returns its final status, or BUSY, WAIT, ALREADY_ENDED or
    MISSING."""
    claim = claim_run(run_id, worker=worker)
    if claim.run is None or claim.outcome != "claimed":
        return claim.outcome
    run = claim.run
    attempt = run.attempts
    if attempt > settings.TOKSPEED_RUN_MAX_ATTEMPTS:
        reason = f"Started {attempt} times without finishing: its worker keeps being lost."
        finish_run(run, status=RunStatus.FAILED, reason=reason, attempt=attempt)
        return run.status
    try:
        config = endpoint_config(run.endpoint)
    except MissingKey as exc:
        reason = (
            f"{exc.variable} is not set in the worker's environment (API key of {run.endpoint})."
        )
        finish_run(run, status=RunStatus.FAILED, reason=reason, attempt=attempt)
        return run.status
    if run.workload.reasoning_effort:
        config = replace(config, reasoning_effort=run.workload.reasoning_effort)
    too_big = workload_ceiling_errors(
        concurrency=run.concurrency,
        repetitions=run.repetitions,
        prompt=run.workload.largest_request_text(),
        context_tokens=run.context_tokens,
        max_output_tokens=run.workload.max_output_tokens,
    )
    if too_big:
        finish_run(run, status=RunStatus.FAILED, reason=" ".join(too_big), attempt=attempt)
        return run.status
    opened = retry_db(lambda: breaker.trip(run.endpoint_id, run.vantage_id), what="breaker")
    if opened is not None:
        probe = breaker.probe(
            config,
            prompt=WorkloadText.of(run.workload, context_tokens=0).build(0),
            provider=run.endpoint.provider,
        )
        if not probe.ok:  # the probe sent the workload's first prompt: no quote of it kept
            reason = Withheld.of(run.workload)(breaker.refusal(probe, opened))
            finish_run(run, status=RunStatus.FAILED, reason=reason, attempt=attempt)
            return run.status
    try:
        measure_missing(run, config, attempt=attempt)
    except LeaseLost:
        log.warning("run %s was taken over by another worker; stopping", run.id)
        return TAKEN_OVER
    except SoftTimeLimitExceeded:
        stored = retry_db(run.samples.count, what="samples")
        reason = f"Stopped by the task time limit with {stored} of {run.expected_samples} samples."
        finish_run(run, status=RunStatus.FAILED, reason=reason, attempt=attempt)
        return run.status
    except DISCONNECTS:
        raise  # the database is gone past its patience: the tick ends the run from its samples
    except Exception as exc:  # noqa: BLE001 - say what stopped it, never "worker was lost"
        log.exception("run %s stopped by an error", run.id)
        stored = retry_db(run.samples.count, what="samples")
        reason = (
            f"Stopped by an error in tokspeed ({type(exc).__name__}) with {stored} of "
            f"{run.expected_samples} samples stored."
        )
        finish_run(run, status=RunStatus.FAILED, reason=reason, attempt=attempt)
        return run.status
    finish_run(run, attempt=attempt)
    return run.status


def rounds_to_measure(run: Run) -> list[tuple[int, set[int]]]:
    """(round, indices it still lacks) for every round with a sample missing, in order.

    Sample index = round × concurrency + position in the burst.
    """
    stored = set(
        retry_db(lambda: list(run.samples.values_list("index", flat=True)), what="samples")
    )
    todo = []
    for round_no in range(run.repetitions):
        indices = range(round_no * run.concurrency, (round_no + 1) * run.concurrency)
        missing = {i for i in indices if i not in stored}
        if missing:
            todo.append((round_no, missing))
    return todo


def measure_missing(run: Run, config: EndpointConfig, *, attempt: int) -> None:
    """Stream the rounds that lack samples and store each sample as its request ends.

    A partly stored round is re-sent at full concurrency (per-user speed depends on it) and
    only its missing samples are kept.
    """
    todo = rounds_to_measure(run)
    if not todo:
        return
    # Everything from the database is read here: no ORM access inside the event loop.
    shape = Shape(
        text=WorkloadText.of(run.workload, context_tokens=run.context_tokens),
        max_tokens=run.workload.max_output_tokens,
        concurrency=run.concurrency,
        cold=run.workload.cold_connections,
        network=network_for(run.endpoint.provider),
    )
    heartbeat_s = max(settings.TOKSPEED_RUN_LEASE_S / 3, 0.2)
    with SampleWriter(
        run_id=run.id,
        slot=run.slot,
        attempt=attempt,
        heartbeat_s=heartbeat_s,
        prompt_count=len(shape.text.prompts),
        withheld=Withheld.of(run.workload),
    ) as writer:
        asyncio.run(_measure_rounds(shape, config, todo, writer))
        lost = writer.lost
    if lost:
        raise LeaseLost


@dataclass(frozen=True, slots=True)
class Shape:
    """What each round sends."""

    text: WorkloadText
    max_tokens: int
    concurrency: int
    cold: bool
    network: Network


async def _measure_rounds(
    shape: Shape, config: EndpointConfig, todo: list[tuple[int, set[int]]], writer: SampleWriter
) -> None:
    limits = Limits.from_settings()
    ruler = ContextRuler()
    async with make_client(
        limits=limits, max_connections=shape.concurrency, network=shape.network
    ) as client:
        for round_no, missing in todo:
            if writer.stopped:
                # Taken over, or its writer gave up on the database: no heartbeat holds the
                # endpoint any more and nothing would be stored. close() says which.
                return
            first = round_no * shape.concurrency
            # Prompts are built before the burst: nothing but streaming while clocks run.
            prompts = [
                shape.text.build(first + position, chars_per_token=ruler.chars_per_token)
                for position in range(shape.concurrency)
            ]

            def on_done(position: int, measurement: Measurement, first=first, missing=missing):
                if first + position in missing:
                    writer.put(first + position, measurement)

            burst = await measure_burst(
                client,
                config,
                prompts=prompts,
                max_tokens=shape.max_tokens,
                limits=limits,
                on_done=on_done,
                cold=shape.cold,
            )
            # Between rounds, never while a clock runs: the provider's own tokens per character.
            for prompt, measurement in zip(prompts, burst.samples, strict=False):
                ruler.learn(prompt_chars(prompt), measurement.input_tokens)
