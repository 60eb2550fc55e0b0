"""Synthetic history: a year of realistic-looking runs and samples for demos and benchmarks.

Everything seeded belongs to providers flagged `simulated` and named "Synthetic …"; runs carry
client_version "synthetic" and samples an error message that says so.
"""

import multiprocessing
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from django.db import connection, connections, transaction
from django.utils import timezone

from providers.models import Endpoint

from ..costs import input_tokens_estimate
from ..models import Run, Sample, Vantage, Workload
from ..rollups import windows
from ..rollups import write as rollups
from ..selectors.scope import resolve_vantage
from . import store
from .generate import WorkloadSpec, epoch_seconds, generate
from .profiles import ensure_endpoints, make_profile
from .rows import run_columns, sample_columns

PREFERRED_WORKLOADS = ("base", "long-context", "parallel-10", "peak")


class SeedError(Exception):
    """The request cannot be seeded as asked (message says why and what to do)."""


@dataclass(slots=True)
class SeedReport:
    endpoints: int = 0
    runs: int = 0
    samples: int = 0
    seconds: float = 0.0


def slot_times(*, days: int, per_day: int, now: datetime) -> list[datetime]:
    """The last days × per_day slots at or before `now`: per_day evenly spread UTC times
    starting at 02:00 (the default schedule's 02:00, 10:00, 18:00 for 3 a day)."""
    step = timedelta(hours=24 / per_day)
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    first_day = today - timedelta(days=days)
    moments = [
        first_day + timedelta(days=d) + timedelta(hours=2) + i * step
        for d in range(days + 1)
        for i in range(per_day)
    ]
    return [m for m in moments if m <= now][-days * per_day :]


def pick_workloads(count: int) -> list[Workload]:
    enabled = list(Workload.objects.filter(enabled=True))
    ranked = sorted(
        enabled,
        key=lambda w: (
            PREFERRED_WORKLOADS.index(w.slug) if w.slug in PREFERRED_WORKLOADS else 99,
            w.slug,
        ),
    )
    if len(ranked) < count:
        raise SeedError(f"Only {len(ranked)} enabled workloads exist; asked for {count}.")
    return ranked[:count]


@dataclass(frozen=True, slots=True)
class Plan:
    """What every endpoint's seeding shares (picklable: worker processes receive it)."""

    seed: int
    days: int
    samples_per_run: int
    slots: tuple[float, ...]  # epoch seconds
    workload_ids: tuple[int, ...]
    vantage_id: int


def seed_endpoint(plan: Plan, number: int, endpoint_id: int) -> int:
    """Generate and write one endpoint's history in one transaction; returns its run count."""
    endpoint = Endpoint.objects.get(pk=endpoint_id)
    by_id = Workload.objects.in_bulk(plan.workload_ids)
    specs = [
        WorkloadSpec(
            workload_id=w.id,
            context_tokens=w.context_tokens,
            concurrency=w.concurrency_for(endpoint),
            repetitions=w.repetitions,
            max_output_tokens=w.max_output_tokens,
            input_tokens=input_tokens_estimate(w),
        )
        for w in (by_id[i] for i in plan.workload_ids)
    ]
    rng = np.random.default_rng([plan.seed, number])
    seconds = np.asarray(plan.slots)
    batch = generate(
        make_profile(rng, days=plan.days),
        slots=seconds,
        workloads=specs,
        samples_per_run=plan.samples_per_run,
        first_day=float(seconds[0]),
        rng=rng,
    )
    with transaction.atomic():
        runs = run_columns(batch, endpoint_id=endpoint.id, vantage_id=plan.vantage_id)
        ids = store.reserve_ids(Run, batch.run_count)
        ids = store.write(Run, ({"id": ids} if ids else {}) | runs)
        store.write(Sample, sample_columns(batch, ids))
    return batch.run_count


def _in_workers(plan: Plan, tasks: list[tuple[int, int]], jobs: int) -> Iterator[int]:
    """Run counts as endpoints finish, `jobs` processes at a time (forked; each opens its own
    database connection, so the parent closes its own first)."""
    connections.close_all()
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [pool.submit(seed_endpoint, plan, number, pk) for number, pk in tasks]
        for future in as_completed(futures):
            yield future.result()


def seed_history(
    *,
    endpoints: int,
    days: int,
    workloads: int,
    slots: int,
    samples_per_run: int = 5,
    seed: int = 1,
    replace: bool = False,
    jobs: int = 1,
    now: datetime | None = None,
    progress: Callable[[int, int, SeedReport], None] | None = None,
) -> SeedReport:
    """Seed `endpoints` synthetic endpoints × `workloads` × `days` × `slots` runs of
    `samples_per_run` samples each, from the default vantage; `jobs` endpoints at a time
    (PostgreSQL only: SQLite takes one writer)."""
    started = time.perf_counter()
    chosen = pick_workloads(workloads)
    vantage = resolve_vantage(None) or Vantage.objects.create(
        slug="local", label="This machine", queue="local", is_default=True
    )
    catalog = ensure_endpoints(endpoints, np.random.default_rng([seed, 0]))
    existing = Run.objects.filter(endpoint__in=catalog)
    if existing.exists():
        if not replace:
            raise SeedError(
                f"The synthetic endpoints already have {existing.count()} runs; "
                "pass --replace to seed them again."
            )
        Sample.objects.filter(run__endpoint__in=catalog).delete()
        existing.delete()
    moments = slot_times(days=days, per_day=slots, now=now or timezone.now())
    plan = Plan(
        seed=seed,
        days=days,
        samples_per_run=samples_per_run,
        slots=tuple(epoch_seconds(moments).tolist()),
        workload_ids=tuple(w.id for w in chosen),
        vantage_id=vantage.id,
    )
    tasks = [(number, endpoint.id) for number, endpoint in enumerate(catalog, start=1)]
    # Workers need committed rows and their own connections: not inside a caller's transaction.
    parallel = (
        jobs > 1
        and len(tasks) > 1
        and connection.vendor == "postgresql"
        and not connection.in_atomic_block
    )
    counts = (
        _in_workers(plan, tasks, jobs)
        if parallel
        else (seed_endpoint(plan, number, pk) for number, pk in tasks)
    )
    report = SeedReport()
    for runs in counts:
        report.endpoints += 1
        report.runs += runs
        report.samples += runs * samples_per_run
        report.seconds = time.perf_counter() - started
        if progress:
            progress(report.endpoints, len(tasks), report)
    # Seeded runs skip finish_run: count them into the long windows' rollups in one pass.
    rollups.rebuild()
    windows.refresh(today=(now or timezone.now()).date(), force=True)
    report.seconds = time.perf_counter() - started
    return report
