"""How fast does the scheduling machinery go, and does a busy worker spoil measurements?

    python bench/scheduler.py [--endpoints 200] [--window 45] [--postgres] [--redis]

Registers N simulated endpoints × 2 workloads (base and long-context, 5 repetitions, short
replies so that the machinery, not the streaming, dominates), all due at once, and prints:

- the tick's time to create, claim and enqueue every due run (and a steady-state tick);
- runs completed per minute by one worker process (prefork, concurrency 1) over a window;
- the TTFT error (p50, ms) of bench/accuracy.py's measurement, idle (mean of before and after)
  and while a worker runs 4 runs at once; target: busy ≤ 2 × idle (or idle + 1 ms, whichever
  is larger: sub-millisecond figures are noise).

Default: the embedded setup (a scratch SQLite file and the filesystem broker in a temporary
folder). --postgres / --redis use a scratch database `tokspeed_bench_scheduler` on
127.0.0.1:5432 and Redis database 14. Bounded: about two minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PG_URL = "postgres://postgres@127.0.0.1:5432/tokspeed_bench_scheduler"
REDIS_URL = "redis://127.0.0.1:6379/14"
QUEUE = "bench-scheduler"
ACCURACY = {"concurrency": 4, "rounds": 5, "tokens": 300}
CPUS = sorted(os.sched_getaffinity(0))


def configure(args: argparse.Namespace, scratch: Path) -> None:
    """Environment for this process and the workers, set before Django loads its settings."""
    os.environ["TOKSPEED_VAR_DIR"] = str(scratch)
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("CELERY_BROKER_URL", None)
    if args.postgres:
        import psycopg

        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
            c.execute("DROP DATABASE IF EXISTS tokspeed_bench_scheduler")
            c.execute("CREATE DATABASE tokspeed_bench_scheduler")
        os.environ["DATABASE_URL"] = PG_URL
    if args.redis:
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()
        os.environ["CELERY_BROKER_URL"] = REDIS_URL
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))


def register(sim_url: str, endpoints: int) -> None:
    from django.utils import timezone

    from benchmarks.models import Schedule, Vantage, Workload
    from providers.models import Endpoint, Provider

    long_ago = timezone.now() - timedelta(days=1)
    # (provider, model) is unique: 10 models (reply lengths 40–49 tokens) per simulated provider.
    for p in range(-(-endpoints // 10)):
        provider = Provider.objects.create(
            slug=f"bench-sim-{p}",
            name=f"Bench sim {p}",
            protocol="openai_chat",
            base_url=sim_url + "/v1",
            simulated=True,
        )
        Endpoint.objects.bulk_create(
            Endpoint(provider=provider, slug=f"bench-{p}-{i}", model=f"sim-fast+tokens={40 + i}")
            for i in range(min(10, endpoints - p * 10))
        )
    Endpoint.objects.update(created_at=long_ago)
    vantage = Vantage.objects.create(slug="bench", label="Bench", queue=QUEUE)
    workloads = [
        Workload.objects.create(slug="bench-base", name="b", repetitions=5, max_output_tokens=64),
        Workload.objects.create(
            slug="bench-long", name="l", context_tokens=30_000, repetitions=5, max_output_tokens=64
        ),
    ]
    schedule = Schedule.objects.create(name="bench", vantage=vantage, interval_minutes=60)
    schedule.workloads.set(workloads)
    schedule.endpoints.set(Endpoint.objects.all())
    Schedule.objects.filter(id=schedule.id).update(created_at=long_ago)
    Schedule.objects.exclude(id=schedule.id).update(enabled=False)  # the default schedule


def start_worker(processes: int, log: Path) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "tokspeed",
        "worker",
        "-Q",
        QUEUE,
        "-P",
        "prefork",
        "-c",
        str(processes),
        "-n",
        f"bench{processes}@%h",
        "-l",
        "warning",
        "--without-mingle",
        "--without-gossip",
        "--without-heartbeat",
    ]
    cpus = CPUS  # all of them: the bench process itself is pinned to one by accuracy.py
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),  # warnings and errors of the worker, if any
        preexec_fn=lambda: os.sched_setaffinity(0, cpus),
    )


def wait_until(predicate, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting: {what}")
        time.sleep(0.2)


def stop(worker: subprocess.Popen) -> None:
    worker.terminate()  # warm: lets the runs in hand finish
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def ended() -> int:
    from benchmarks.models import Run

    return Run.objects.filter(status__in=["done", "partial", "failed"]).count()


def ttft_error_p50(accuracy, sim) -> float:
    """bench/accuracy.py's TTFT error (client ttft − simulator first-token time), p50 in ms."""
    from benchmarks.stats import percentile

    samples, _ = asyncio.run(accuracy.run_level(sim, **ACCURACY))
    errors = sorted(
        m.ttft_ms - (sim.truth(m.request_id)["first_token_ns"] - m.t0_ns) / 1e6
        for m in samples
        if m.ok
    )
    return percentile(errors, 50)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoints", type=int, default=200)
    parser.add_argument("--window", type=float, default=45.0, help="seconds of the rate window")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite")
    parser.add_argument("--redis", action="store_true", help="Redis instead of the filesystem")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tokspeed-bench-"))
    configure(args, scratch)

    import accuracy  # sets Django up with the environment above
    from django.core.management import call_command
    from django.db import connection

    from benchmarks import dispatch

    call_command("migrate", interactive=False, verbosity=0)
    db = connection.vendor
    broker = "redis" if args.redis else "filesystem"
    print(
        f"tokspeed scheduler bench: {db} + {broker} broker, {args.endpoints} endpoints × 2 "
        f"workloads, CPUs {sorted(os.sched_getaffinity(0))}",
        flush=True,
    )
    with accuracy.pinned_simulator() as sim:
        register(sim.base_url, args.endpoints)
        idle_error = ttft_error_p50(accuracy, sim)

        started = time.perf_counter()
        report = dispatch.tick()
        tick_s = time.perf_counter() - started
        started = time.perf_counter()
        dispatch.tick()
        steady_ms = (time.perf_counter() - started) * 1000
        print(
            f"tick: {len(report.enqueued)} runs created, claimed and enqueued in {tick_s:.2f} s"
            f"; next tick (nothing due) {steady_ms:.0f} ms",
            flush=True,
        )

        worker = start_worker(1, scratch / "worker.log")
        try:
            wait_until(lambda: ended() > 0, "the first run of a worker process")
            first, t0 = ended(), time.perf_counter()
            time.sleep(args.window)
            done, elapsed = ended() - first, time.perf_counter() - t0
        finally:
            stop(worker)
        per_minute = done / elapsed * 60
        print(
            f"one worker process: {done} runs in {elapsed:.0f} s = {per_minute:.1f} runs/min "
            f"(each run: 5 requests of 40–49 tokens, half with a 30k-token prompt)",
            flush=True,
        )

        worker = start_worker(4, scratch / "worker.log")
        try:
            before = ended()
            wait_until(lambda: ended() >= before + 4, "four processes taking runs")
            during = ended()
            busy_error = ttft_error_p50(accuracy, sim)
            during = ended() - during
        finally:
            stop(worker)
        idle_error = (idle_error + ttft_error_p50(accuracy, sim)) / 2  # before and after
    limit = max(2 * idle_error, idle_error + 1.0)
    verdict = "OK" if busy_error <= limit else "MISSED"
    print(
        f"TTFT error p50 (accuracy bench, c={ACCURACY['concurrency']}): idle {idle_error:.2f} ms"
        f", worker busy with 4 runs at once {busy_error:.2f} ms ({during} runs ended meanwhile)"
        f"; target ≤ {limit:.2f} ms  {verdict}",
        flush=True,
    )
    if verdict == "OK":
        shutil.rmtree(scratch, ignore_errors=True)
        return 0
    print(f"kept for a look: {scratch} (worker.log, the SQLite file)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
