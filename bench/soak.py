"""Soak: 50 simulated endpoints on a one-minute schedule, two probe workers, for N minutes.

    python bench/soak.py [--minutes 60] [--endpoints 50] [--concurrency 2]

The production shape on one machine: PostgreSQL (a scratch database `tokspeed_soak` on
127.0.0.1:5432), a Redis broker of its own (redis-server on a free port, no persistence), the
simulator, a central worker (queue "tokspeed": tick, evaluations), two probe workers (prefork,
--concurrency processes each) and celery beat. Every endpoint gets one run per minute of a small
workload (1 request × 2 rounds, ~40 tokens). The full soak is an hour (--minutes 60); a fraction
(e.g. --minutes 5) shows the same figures over fewer slots. Prints:

- runs expected (endpoints × slots in the window) vs done / partial / failed / skipped;
- samples stored; p50 / p95 queue wait (run started − its slot);
- skipped slots (missed or held back), with their reasons;
- resident memory (RSS) of every worker process, sampled every 30 s: after a warm-up
  (WARMUP_S after that process started) each process's min, max and max − min. Pool processes
  are never recycled here (TOKSPEED_WORKER_MAX_TASKS_PER_CHILD=0, no memory cap), so growth
  shows instead of being hidden by recycling.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PG_URL = "postgres://postgres@127.0.0.1:5432/tokspeed_soak"
QUEUE = "soak"
CELERY = [sys.executable, "-m", "celery", "-A", "tokspeed"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(pid: int) -> list[int]:
    """pid and its children (a prefork worker's pool processes)."""
    found = [pid]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def memory(workers: dict[str, subprocess.Popen]) -> dict[str, list[int]]:
    return {name: [rss_kib(p) // 1024 for p in tree(w.pid)] for name, w in workers.items()}


WARMUP_S = 600


class RssLog:
    """RSS (KiB) of every worker process over time; a process's first WARMUP_S are warm-up."""

    def __init__(self) -> None:
        self.first_seen: dict[tuple[str, int], float] = {}
        self.after_warmup: dict[tuple[str, int], list[int]] = {}

    def sample(self, workers: dict[str, subprocess.Popen]) -> None:
        now = time.monotonic()
        for name, worker in workers.items():
            for pid in tree(worker.pid):
                key = (name, pid)
                seen = self.first_seen.setdefault(key, now)
                kib = rss_kib(pid)
                if kib and now - seen >= WARMUP_S:
                    self.after_warmup.setdefault(key, []).append(kib)

    def print(self) -> float:
        """One line per process with samples after its warm-up; the largest max − min (MiB)."""
        worst = 0.0
        for (name, pid), values in sorted(self.after_warmup.items()):
            spread = (max(values) - min(values)) / 1024
            worst = max(worst, spread)
            print(f"  RSS {name} pid {pid}: {len(values)} samples after warm-up, "
                  f"min {min(values) / 1024:.1f} MiB, max {max(values) / 1024:.1f} MiB, "
                  f"max − min {spread:.1f} MiB")  # fmt: skip
        print(f"worker RSS after warm-up ({WARMUP_S} s a process): largest max − min "
              f"{worst:.1f} MiB over {len(self.after_warmup)} processes")  # fmt: skip
        return worst


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


FAULT_EVERY_S = 240
DB_DOWN_S = 25


def stuck_count(window) -> int:  # noqa: ANN001 - a Run queryset
    return window.filter(status__in=["queued", "running"]).count()


def duplicate_runs(window) -> int:  # noqa: ANN001
    from django.db.models import Count

    keys = window.values("endpoint_id", "workload_id", "vantage_id", "slot")
    return keys.annotate(n=Count("id")).filter(n__gt=1).count()


def duplicate_samples(window) -> int:  # noqa: ANN001
    from django.db.models import Count

    from benchmarks.models import Sample

    rows = Sample.objects.filter(run__in=window).values("run_id", "index")
    return rows.annotate(n=Count("id")).filter(n__gt=1).count()


def database_down(seconds: float) -> None:
    """The soak database refuses connections and loses every open one for `seconds`."""
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
        c.execute("ALTER DATABASE tokspeed_soak ALLOW_CONNECTIONS false")
        try:
            c.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = 'tokspeed_soak'"
            )
            time.sleep(seconds)
        finally:
            c.execute("ALTER DATABASE tokspeed_soak ALLOW_CONNECTIONS true")


def inject(number: int, start, workers: dict, options: list[str]) -> str:  # noqa: ANN001
    """Fault `number`: even ones SIGKILL probe-1 (and start it again), odd ones close the
    database across the next minute boundary (the tick meets the outage)."""
    if number % 2 == 0:
        old = workers["probe-1"]
        for pid in tree(old.pid)[::-1]:
            os.kill(pid, signal.SIGKILL)
        old.wait()
        workers["probe-1"] = start(
            "probe-1", [*CELERY, "worker", "-Q", QUEUE, "-c", "2", "-n", "probe-1@%h", *options]
        )
        return f"{datetime.now(UTC):%H:%M:%S} SIGKILL probe-1 and its pool"
    to_boundary = 60 - datetime.now(UTC).second
    time.sleep(max(to_boundary - DB_DOWN_S / 2, 0))
    at = datetime.now(UTC)
    database_down(DB_DOWN_S)
    from django.db import connection

    connection.close()  # this process's connection was terminated too
    return f"{at:%H:%M:%S} database closed {DB_DOWN_S} s across a tick"


def seed_schedule(simulator, endpoints: int) -> None:  # noqa: ANN001 - a SimulatorHandle
    """`endpoints` simulated endpoints on a one-minute schedule of the soak's own queue."""
    from django.utils import timezone

    from benchmarks.models import Schedule, Vantage, Workload
    from providers.models import Endpoint, Provider

    provider = Provider.objects.create(
        slug="sim", name="Sim", protocol="openai_chat", base_url=simulator.openai_base,
        simulated=True,
    )  # fmt: skip
    week_ago = timezone.now() - timedelta(days=7)
    for i in range(endpoints):
        Endpoint.objects.create(
            provider=provider, slug=f"e{i}", model=f"sim-fast+tokens=40+tps=120+ttft={80 + i}"
        )
    Endpoint.objects.update(created_at=week_ago)
    work = Workload.objects.create(slug="soak", name="soak", concurrency=1, repetitions=2,
                                   max_output_tokens=64)  # fmt: skip
    vantage = Vantage.objects.create(slug="soak", label="soak", queue=QUEUE, is_default=True)
    schedule = Schedule.objects.create(name="soak", vantage=vantage, interval_minutes=1)
    schedule.workloads.set([work])
    # The seeded default schedule would queue runs on a queue nobody here consumes.
    Schedule.objects.exclude(id=schedule.id).update(enabled=False)
    Schedule.objects.update(created_at=week_ago)


def watch(end: datetime, faults: bool, fault, rss) -> list[str]:  # noqa: ANN001 - callables
    """Print the runs' states every 30 s until `end`, injecting a fault every FAULT_EVERY_S;
    `rss()` samples the workers' memory every 30 s."""
    from benchmarks.models import Run

    injected: list[str] = []
    next_fault = time.monotonic() + FAULT_EVERY_S
    while datetime.now(UTC) < end:
        time.sleep(30)
        rss()
        if faults and time.monotonic() >= next_fault:
            next_fault = time.monotonic() + FAULT_EVERY_S
            injected.append(fault(len(injected)))
            print(f"  fault: {injected[-1]}", flush=True)
        states = Counter(Run.objects.values_list("status", flat=True))
        print(f"  {datetime.now(UTC):%H:%M:%S} {dict(states)} load "
              f"{os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    return injected


def report(started: datetime, end: datetime, endpoints: int, injected: list[str]) -> None:
    """Scheduled / done / failed / skipped / stuck / duplicate counts of the soak's window."""
    from benchmarks.models import Run, Sample

    window = Run.objects.filter(slot__gt=started, slot__lte=end)
    slots = int((end - started).total_seconds() // 60)
    states = Counter(window.values_list("status", flat=True))
    waits = [
        (r.started_at - r.slot).total_seconds()
        for r in window.exclude(started_at=None).only("slot", "started_at")
    ]
    samples = Sample.objects.filter(run__in=window).count()
    reasons = Counter(window.filter(status="skipped").values_list("failure_reason", flat=True))
    failed = Counter(window.filter(status="failed").values_list("failure_reason", flat=True))
    print(f"runs expected {slots * endpoints} ({slots} slots × {endpoints})")
    print(f"runs done {states.get('done', 0)}, partial {states.get('partial', 0)}, failed "
          f"{states.get('failed', 0)}, skipped {states.get('skipped', 0)}, still queued or "
          f"running {states.get('queued', 0) + states.get('running', 0)}")  # fmt: skip
    print(f"samples stored {samples} (expected {2 * states.get('done', 0)} for done runs)")
    print(
        f"queue wait (started − slot): p50 {percentile(waits, 0.5):.1f} s, "
        f"p95 {percentile(waits, 0.95):.1f} s, max {max(waits, default=0):.1f} s"
    )
    print(f"skipped slots {states.get('skipped', 0)}: {dict(reasons) or 'none'}")
    print(f"stuck (queued or running after the drain) {stuck_count(window)}")
    print(f"duplicate runs {duplicate_runs(window)}, duplicate samples "
          f"{duplicate_samples(window)}")  # fmt: skip
    print(f"faults injected {len(injected)}: {injected or 'none'}")
    if failed:
        print(f"failed: {dict(failed)}")


def start_workers(start, concurrency: int) -> tuple[list[str], dict]:  # noqa: ANN001
    """Two probe workers on the soak's queue and a central one: (their options, the probes)."""
    options = ["-l", "warning", "--without-mingle", "--without-gossip", "--without-heartbeat"]
    workers = {
        name: start(
            name,
            [
                *CELERY,
                "worker",
                "-Q",
                QUEUE,
                "-c",
                str(concurrency),
                "-n",
                f"{name}@%h",
                *options,
            ],
        )  # fmt: skip
        for name in ("probe-1", "probe-2")
    }
    start("central", [*CELERY, "worker", "-Q", "tokspeed", "-c", "1", "-n", "central@%h",
                      *options])  # fmt: skip
    return options, workers


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--endpoints", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=2, help="processes per probe worker")
    parser.add_argument(
        "--faults",
        action="store_true",
        help="every FAULT_EVERY_S: SIGKILL a probe worker (restarted), or close the database "
        "for DB_DOWN_S across a minute boundary (a tick), in turn",
    )
    return parser.parse_args()


def soak_env(scratch: Path, broker: str) -> dict[str, str]:
    """The environment of the soak's processes: its own database, broker and var folder."""
    return dict(
        os.environ,
        DATABASE_URL=PG_URL,
        CELERY_BROKER_URL=broker,
        # A production-like start (DEBUG off) needs a secret; a throwaway one will do.
        SECRET_KEY=os.environ.get("SECRET_KEY") or secrets.token_urlsafe(40),
        TOKSPEED_VAR_DIR=str(scratch),
        TOKSPEED_ALLOW_PRIVATE_ENDPOINTS="1",
        DJANGO_SETTINGS_MODULE="tokspeed.settings",
        # No recycling: the soak shows whether a pool process grows (the figure is RSS flat).
        TOKSPEED_WORKER_MAX_TASKS_PER_CHILD="0",
        TOKSPEED_WORKER_MAX_MEMORY_PER_CHILD_KB="0",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )


def main() -> None:
    args = arguments()
    scratch = Path(tempfile.mkdtemp(prefix="tokspeed-soak-"))
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS tokspeed_soak WITH (FORCE)")
        c.execute("CREATE DATABASE tokspeed_soak")
    redis_port = free_port()
    broker = f"redis://127.0.0.1:{redis_port}/0"
    env = soak_env(scratch, broker)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    children: dict[str, subprocess.Popen] = {}

    def start(name: str, command: list[str]) -> subprocess.Popen:
        log = open(scratch / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
        children[name] = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
        return children[name]

    try:
        start("redis", [shutil.which("redis-server") or "redis-server", "--port", str(redis_port),
                        "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])  # fmt: skip
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env,
                       check=True)  # fmt: skip
        import django

        django.setup()

        from providers.simulator.process import start_simulator

        simulator = start_simulator()
        seed_schedule(simulator, args.endpoints)

        options, workers = start_workers(start, args.concurrency)
        start("beat", [*CELERY, "beat", "-l", "warning", "-s", str(scratch / "beat")])
        time.sleep(20)  # workers import and fork; beat waits for the next minute
        started = datetime.now(UTC)
        rss_start = memory(workers)
        print(f"soak: {args.endpoints} endpoints, 2 probe workers × {args.concurrency} processes,"
              f" one-minute schedule, {args.minutes:g} min (load {os.getloadavg()[0]:.1f})",
              flush=True)  # fmt: skip
        end = started + timedelta(minutes=args.minutes)
        rss_log = RssLog()
        everyone = {**workers, "central": children["central"]}
        rss_log.sample(everyone)
        injected = watch(
            end,
            args.faults,
            lambda n: inject(n, start, workers, options),
            lambda: rss_log.sample({**workers, "central": children["central"]}),
        )
        rss_end = memory(workers)
        children.pop("beat").send_signal(signal.SIGTERM)
        time.sleep(60)  # let the last slot's runs finish
        report(started, end, args.endpoints, injected)
        for name in workers:
            print(f"worker {name} RSS MiB (main, pool…): start {rss_start[name]} "
                  f"end {rss_end[name]}")  # fmt: skip
        rss_log.print()
        print(f"load average at end {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs, shared)")
        simulator.stop()
    finally:
        for process in children.values():
            if process.poll() is None:
                process.terminate()
        for process in children.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
