"""Does a worker process grow run after run? tracemalloc across runs, in one process.

    python bench/worker_memory.py [--runs 120] [--top 8]

Executes runs one after another the way a pool process does (runner.execute against the
simulator, PostgreSQL scratch database `tokspeed_memory`), and prints the traced memory and
RSS after warm-up and at the end, and the allocation sites that grew the most in between.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=120)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument(
        "--no-task-boundary", action="store_true", help="skip the after-task cleanup (before)"
    )
    args = parser.parse_args()
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS tokspeed_memory WITH (FORCE)")
        c.execute("CREATE DATABASE tokspeed_memory")
    os.environ.update(
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/tokspeed_memory",
        DJANGO_SETTINGS_MODULE="tokspeed.settings",
        TOKSPEED_ALLOW_PRIVATE_ENDPOINTS="1",
        LOG_LEVEL="WARNING",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from benchmarks import runner
    from benchmarks.models import Run, Vantage, Workload
    from benchmarks.tasks import forget_queries
    from providers.models import Endpoint, Provider
    from providers.simulator.process import start_simulator

    call_command("migrate", verbosity=0)
    with start_simulator() as simulator:
        provider = Provider.objects.create(
            slug="sim", name="Sim", protocol="openai_chat", base_url=simulator.openai_base
        )
        endpoint = Endpoint.objects.create(
            provider=provider, slug="e", model="sim-fast+tokens=40+tps=400+ttft=10"
        )
        work = Workload.objects.create(slug="m", name="m", concurrency=2, repetitions=2)
        vantage = Vantage.objects.create(slug="m", label="m", queue="m")

        def one() -> None:
            run = Run.objects.create(
                endpoint=endpoint,
                workload=work,
                vantage=vantage,
                slot=timezone.now(),
                concurrency=2,
                repetitions=2,
            )
            assert runner.execute(run.id, worker="bench") == "done"
            if not args.no_task_boundary:
                forget_queries()  # what Celery's task_postrun signal does after each task

        warmup = max(args.runs // 6, 5)
        for _ in range(warmup):
            one()
        gc.collect()
        tracemalloc.start(25)
        before, rss_before = tracemalloc.take_snapshot(), rss_mib()
        for _ in range(args.runs):
            one()
        gc.collect()
        after, rss_after = tracemalloc.take_snapshot(), rss_mib()
    grown = after.compare_to(before, "traceback")
    total = sum(stat.size_diff for stat in grown)
    print(f"{args.runs} runs after {warmup} warm-up runs: traced +{total / 1024:.0f} KiB "
          f"({total / args.runs / 1024:.1f} KiB per run); RSS {rss_before:.0f} → "
          f"{rss_after:.0f} MiB")  # fmt: skip
    for stat in grown[: args.top]:
        # Frames run oldest first: name the newest frame of our own code, and the allocation.
        ours = [f for f in stat.traceback if f.filename.startswith(str(ROOT / "benchmarks"))]
        where = f"{Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else "?"
        alloc = stat.traceback[-1]
        print(f"  +{stat.size_diff / 1024:8.1f} KiB {stat.count_diff:+6d} blocks  {where} "
              f"(allocated at {Path(alloc.filename).name}:{alloc.lineno})")  # fmt: skip


if __name__ == "__main__":
    main()
