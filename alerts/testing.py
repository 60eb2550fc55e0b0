"""Building stored history without a provider: finished runs with samples at chosen slots.

For tests of the alerts app and for demos. Values come from callables of the slot, so a test
states the truth (a step, a daily cycle, an error burst) and checks what the detector makes of
it. Runs are stored as the runner stores them: summary medians, ok/error counts, time-of-day
bucket.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from statistics import median

import numpy as np

from benchmarks.buckets import tod_bucket
from benchmarks.models import Run, RunStatus, Sample

Value = Callable[[datetime], float]


def store_run(
    *,
    endpoint,
    workload,
    vantage,
    slot: datetime,
    decode: list[float],
    ttft: list[float],
    errors: list[str] | None = None,
    client_version: str = "tokspeed test",
) -> Run:
    """One finished run: a sample per decode/ttft pair, then one per error category."""
    errors = errors or []
    ok = len(decode)
    status = RunStatus.DONE if not errors else RunStatus.PARTIAL if ok else RunStatus.FAILED
    run = Run.objects.create(
        endpoint=endpoint,
        workload=workload,
        vantage=vantage,
        slot=slot,
        status=status,
        started_at=slot,
        finished_at=slot + timedelta(minutes=1),
        concurrency=1,
        repetitions=ok + len(errors),
        tod_bucket=tod_bucket(slot),
        client_version=client_version,
        ok_count=ok,
        error_count=len(errors),
        decode_tps_p50=median(decode) if decode else None,
        ttft_p50_ms=median(ttft) if ttft else None,
        summary={"errors_by_category": {c: errors.count(c) for c in sorted(set(errors))}},
    )
    samples = [
        Sample(
            run=run,
            slot=run.slot,
            index=i,
            started_at=slot,
            ttft_ms=t,
            total_ms=t + 1000 * 500 / d,
            output_tokens=500,
            decode_tps=d,
        )
        for i, (d, t) in enumerate(zip(decode, ttft, strict=True))
    ]
    samples += [
        Sample(
            run=run, slot=run.slot, index=ok + i, started_at=slot, error_category=c, http_status=529
        )
        for i, c in enumerate(errors)
    ]
    Sample.objects.bulk_create(samples)
    return run


def store_history(
    *,
    endpoint,
    workload,
    vantage,
    slots: list[datetime],
    decode: Value,
    ttft: Value,
    samples: int = 5,
    noise: float = 0.05,
    seed: int = 0,
    errors: Callable[[datetime], list[str]] | None = None,
    client_version: str = "tokspeed test",
) -> list[Run]:
    """A run per slot with `samples` samples around decode(slot) / ttft(slot) (log-normal noise)."""
    rng = np.random.default_rng(seed)
    runs = []
    for slot in slots:
        failed = errors(slot) if errors else []
        n = samples - len(failed)
        runs.append(
            store_run(
                endpoint=endpoint,
                workload=workload,
                vantage=vantage,
                slot=slot,
                decode=list(decode(slot) * np.exp(rng.normal(0, noise, n))),
                ttft=list(ttft(slot) * np.exp(rng.normal(0, noise, n))),
                errors=failed,
                client_version=client_version,
            )
        )
    return runs


def daily_slots(
    *, end: datetime, days: float, hours: tuple[int, ...] = (2, 10, 18)
) -> list[datetime]:
    """Slots at the given UTC hours, from `days` before `end` up to and including `end`."""
    start = end - timedelta(days=days)
    day = start.replace(hour=0, minute=0, second=0, microsecond=0)
    out = []
    while day <= end:
        for hour in hours:
            slot = day.replace(hour=hour)
            if start < slot <= end:
                out.append(slot)
        day += timedelta(days=1)
    return out
