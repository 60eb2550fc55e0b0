"""Does a worker process grow run after run? tracemalloc across runs, in one process.

    python bench/worker_memory.py [--runs 120] [--top 8]
    python bench/worker_memory.py --celery [--runs 300]

Executes runs one after another the way a pool process does (runner.execute against the
simulator, PostgreSQL scratch database `tokspeed_memory`), and prints the traced memory and
RSS after warm-up and at the end, and the allocation sites that grew the most in between.

With --celery, a real Celery worker (prefork, one pool process, never recycled, a Redis broker
of its own) executes the runs as `execute_run` tasks; the RSS of its main and pool process is
printed every 50 tasks, and the growth after warm-up (the first sixth of the runs).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def rss_of(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def celery_worker(env: dict[str, str]) -> subprocess.Popen:
    """A prefork worker with one pool process on queue "memory", never recycled."""
    env = dict(env, TOKSPEED_WORKER_MAX_TASKS_PER_CHILD="0",
               TOKSPEED_WORKER_MAX_MEMORY_PER_CHILD_KB="0")  # fmt: skip
    command = [sys.executable, "-m", "celery", "-A", "tokspeed", "worker", "-Q", "memory",
               "-c", "1", "-n", "memory@%h", "-l", "warning", "--without-mingle",
               "--without-gossip", "--without-heartbeat"]  # fmt: skip
    return subprocess.Popen(command, cwd=ROOT, env=env)  # noqa: S603 - our own interpreter


def through_celery(args: argparse.Namespace, make_run) -> None:  # noqa: ANN001 - a callable
    """Runs as execute_run tasks of a real worker; RSS of its processes every 50 tasks."""
    from benchmarks.models import Run
    from benchmarks.tasks import execute_run

    worker = celery_worker(dict(os.environ))
    try:
        deadline = time.monotonic() + 120
        while not children_of(worker.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(5)
        warmup = max(args.runs // 6, 5)
        marks: list[tuple[int, float, float]] = []
        for done in range(1, args.runs + 1):
            run = make_run()
            execute_run.apply_async(args=[run.id], queue="memory")
            while Run.objects.filter(id=run.id, status__in=["queued", "running"]).exists():
                time.sleep(0.05)
            if done == warmup or done % 50 == 0 or done == args.runs:
                pool = children_of(worker.pid)
                marks.append((done, rss_of(worker.pid), rss_of(pool[0]) if pool else 0.0))
                print(f"  after {done} tasks: main {marks[-1][1]:.1f} MiB, pool "
                      f"{marks[-1][2]:.1f} MiB", flush=True)  # fmt: skip
        first = next(m for m in marks if m[0] == warmup)
        last = marks[-1]
        tasks = last[0] - first[0]
        print(f"{tasks} tasks after {warmup} warm-up tasks: main {first[1]:.1f} → {last[1]:.1f}"
              f" MiB, pool {first[2]:.1f} → {last[2]:.1f} MiB "
              f"({(last[2] - first[2]) * 1024 / max(tasks, 1):.1f} KiB per task)")  # fmt: skip
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def start_redis() -> subprocess.Popen:
    """A Redis broker of our own (no persistence); CELERY_BROKER_URL points at it."""
    port = 6400 + os.getpid() % 500
    os.environ["CELERY_BROKER_URL"] = f"redis://127.0.0.1:{port}/0"
    return subprocess.Popen(  # noqa: S603 - our own broker
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],  # fmt: skip
        stdout=subprocess.DEVNULL,
    )


def print_growth(args: argparse.Namespace, warmup: int, before, after, rss: tuple) -> None:  # noqa: ANN001
    """Traced growth between the snapshots, and the allocation sites that grew most."""
    grown = after.compare_to(before, "traceback")
    total = sum(stat.size_diff for stat in grown)
    print(f"{args.runs} runs after {warmup} warm-up runs: traced +{total / 1024:.0f} KiB "
          f"({total / args.runs / 1024:.1f} KiB per run); RSS {rss[0]:.0f} → "
          f"{rss[1]:.0f} MiB")  # fmt: skip
    for stat in grown[: args.top]:
        # Frames run oldest first: name the newest frame of our own code, and the allocation.
        ours = [f for f in stat.traceback if f.filename.startswith(str(ROOT / "benchmarks"))]
        where = f"{Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else "?"
        alloc = stat.traceback[-1]
        print(f"  +{stat.size_diff / 1024:8.1f} KiB {stat.count_diff:+6d} blocks  {where} "
              f"(allocated at {Path(alloc.filename).name}:{alloc.lineno})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=120)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--celery", action="store_true", help="through a real Celery worker")
    parser.add_argument(
        "--no-task-boundary", action="store_true", help="skip the after-task cleanup (before)"
    )
    args = parser.parse_args()
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS tokspeed_memory WITH (FORCE)")
        c.execute("CREATE DATABASE tokspeed_memory")
    redis = start_redis() if args.celery else None
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

        def make_run() -> Run:
            return Run.objects.create(
                endpoint=endpoint,
                workload=work,
                vantage=vantage,
                slot=timezone.now(),
                concurrency=2,
                repetitions=2,
            )

        if args.celery:
            try:
                through_celery(args, make_run)
            finally:
                redis.kill()
            return

        def one() -> None:
            run = make_run()
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
    print_growth(args, warmup, before, after, (rss_before, rss_after))


if __name__ == "__main__":
    main()
