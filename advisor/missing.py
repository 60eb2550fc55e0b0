"""The runs an endpoint lacks before the advisor can answer for a profile's shape."""

from __future__ import annotations

from benchmarks.dispatch import queue_run_now
from benchmarks.models import Run, Vantage
from benchmarks.selectors.scope import Workloads, resolve_vantage
from providers.models import Endpoint

from .advice import Advice
from .projection import MISSING_CONCURRENCY, MISSING_LONG


def concurrency_workload(workloads: Workloads, users: int):
    """The base-context workload closest above `users` in flight (peak when none is)."""
    parallel = [w for w in workloads.base_context() if w.concurrency > 1]
    above = sorted((w for w in parallel if w.concurrency >= users), key=lambda w: w.concurrency)
    peak = [w for w in workloads.base_context() if w.concurrency == 0]
    below = sorted(parallel, key=lambda w: -w.concurrency)
    return next(iter(above + peak + below), None)


def missing_runs(advice: Advice) -> list[tuple]:
    """(endpoint option, workload) pairs that would measure what each unmeasured endpoint lacks;
    a missing kind with no workload to measure it is left out."""
    workloads = Workloads.load()
    chosen = {
        "base": workloads.base(),
        MISSING_LONG: workloads.long(),
        MISSING_CONCURRENCY: concurrency_workload(workloads, advice.shape.concurrency),
    }
    pairs = []
    for option in advice.unmeasured:
        for kind in option.projection.missing:
            if chosen.get(kind) is not None:
                pairs.append((option, chosen[kind]))
    return pairs


def queue_missing(advice: Advice, *, vantage: Vantage | str | None = None) -> list[Run]:
    """Queue exactly the missing runs now, through the normal run-now path."""
    where = resolve_vantage(vantage)
    if where is None:
        return []
    pairs = missing_runs(advice)
    endpoints = Endpoint.objects.in_bulk([option.endpoint_id for option, _ in pairs])
    return [
        queue_run_now(endpoint=endpoints[option.endpoint_id], workload=workload, vantage=where)
        for option, workload in pairs
    ]
