"""The runs an endpoint lacks before the advisor can answer for a profile's shape."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from benchmarks.dispatch import queue_run_now
from benchmarks.models import Run, Vantage
from benchmarks.selectors.scope import Workloads, resolve_vantage
from providers.models import Endpoint

from .advice import Advice
from .measured import MISSING_WORKLOAD
from .projection import MISSING_CONCURRENCY, MISSING_LONG


def concurrency_workload(workloads: Workloads, users: int):
    """The base-context workload closest above `users` in flight (peak when none is)."""
    parallel = [w for w in workloads.base_context() if w.concurrency > 1]
    above = sorted((w for w in parallel if w.concurrency >= users), key=lambda w: w.concurrency)
    peak = [w for w in workloads.base_context() if w.concurrency == 0]
    below = sorted(parallel, key=lambda w: -w.concurrency)
    return next(iter(above + peak + below), None)


# Why a missing run is not queued, by Endpoint.why_disabled.
LEFT_OUT_BECAUSE = {
    "no_key": "its provider's key variable is not set",
    "provider": "its provider is disabled in the admin",
    "endpoint": "it is disabled in the admin",
}


@dataclass
class MissingPlan:
    """The missing runs that can run now, and the endpoints left out with why."""

    runnable: list[tuple] = field(default_factory=list)  # (endpoint option, workload)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (endpoint label, why)

    def __len__(self) -> int:
        return len(self.runnable)

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.runnable)

    def left_out_line(self) -> str:
        """ "Left out 2 endpoints: A (why), B (why)." or ""."""
        if not self.left_out:
            return ""
        named = ", ".join(f"{label} ({why})" for label, why in self.left_out)
        count = len(self.left_out)
        return f"Left out {count} endpoint{'s' if count != 1 else ''} that cannot run: {named}."


def missing_runs(advice: Advice) -> MissingPlan:
    """(endpoint option, workload) pairs that would measure what each unmeasured endpoint lacks,
    for endpoints that can run (enabled, key set); the others are listed with why. A missing kind
    with no workload to measure it is left out. On a custom workload: one run of it."""
    if advice.workload is not None:
        chosen = {MISSING_WORKLOAD: advice.workload}
    else:
        workloads = Workloads.load()
        chosen = {
            "base": workloads.base(),
            MISSING_LONG: workloads.long(),
            MISSING_CONCURRENCY: concurrency_workload(workloads, advice.shape.concurrency),
        }
    ids = [option.endpoint_id for option in advice.unmeasured]
    endpoints = Endpoint.objects.select_related("provider").in_bulk(ids)
    plan = MissingPlan()
    for option in advice.unmeasured:
        why = endpoints[option.endpoint_id].why_disabled
        if why:
            plan.left_out.append((option.label, LEFT_OUT_BECAUSE[why]))
            continue
        for kind in option.projection.missing:
            if chosen.get(kind) is not None:
                plan.runnable.append((option, chosen[kind]))
    return plan


def queue_missing(
    advice: Advice, *, vantage: Vantage | str | None = None
) -> tuple[list[Run], MissingPlan]:
    """Queue the missing runs that can run now, through the normal run-now path; and the plan,
    which names what was left out."""
    plan = missing_runs(advice)
    where = resolve_vantage(vantage)
    if where is None:
        return [], plan
    endpoints = Endpoint.objects.in_bulk([option.endpoint_id for option, _ in plan])
    runs = [
        queue_run_now(endpoint=endpoints[option.endpoint_id], workload=workload, vantage=where)
        for option, workload in plan
    ]
    return runs, plan
