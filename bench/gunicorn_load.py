"""8 clients through gunicorn (docs/operations.md's recipe: gunicorn.conf.py, its workers and
threads, or GUNICORN_WORKERS / GUNICORN_THREADS from the environment to time another), and a year
of samples exported through it, verified by row count and checksum. Used by read_side.py."""

from __future__ import annotations

import hashlib
import os
import runpy
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parents[1]
SERVER = "postgresql://postgres@127.0.0.1:5432"


def _free_port() -> int:
    # Other engineers' servers share this machine: never assume a fixed port is ours.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


PORT = _free_port()
# What gunicorn.conf.py gives this environment (its defaults, or GUNICORN_WORKERS / _THREADS).
_RECIPE = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
WORKERS, THREADS = int(_RECIPE["workers"]), int(_RECIPE["threads"])
BASE = f"http://127.0.0.1:{PORT}"


@contextmanager
def gunicorn(database: str, *, response_cache: bool = True):
    env = {
        "TOKSPEED_RESPONSE_CACHE": "1" if response_cache else "0",
        **os.environ,
        "DATABASE_URL": f"{SERVER}/{database}",
        "DJANGO_SETTINGS_MODULE": "tokspeed.settings",
        "TOKSPEED_PUBLIC_DASHBOARD": "1",
        "TOKSPEED_THROTTLE_ANON": "100000000/min",
        "TOKSPEED_EXPORT_STREAM_MAX_ROWS": "1000000000",
        "GUNICORN_BIND": f"127.0.0.1:{PORT}",
        "GUNICORN_WORKERS": str(WORKERS),
    }
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "tokspeed.wsgi", "-c", "gunicorn.conf.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        # Every worker warm (gunicorn.conf.py logs it), not only the first to answer: a worker
        # still warming takes no request, and the timed phase would run on the others alone.
        for _ in range(300):
            if process.poll() is not None:
                raise SystemExit(f"gunicorn exited ({process.returncode}) on port {PORT}")
            log.seek(0)
            if log.read().count(b" warm: ") >= int(env["GUNICORN_WORKERS"]):
                break
            time.sleep(0.2)
        httpx.get(f"{BASE}/api/v1/workloads/", timeout=5)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


# Tables every request writes (the response and advice cache, the throttle counters). A live
# database's autovacuum clears their dead rows within a minute; a PostgreSQL run with autovacuum
# off (this machine's) kept ~10,000 of them from earlier rounds, and Django's cache then spent
# ~1 ms of the database's CPU on each write's COUNT(*). Vacuumed before each target, as
# autovacuum would have.
CHURNED = ("tokspeed_cache", "tokspeed_throttle")


def vacuum_churned(database: str) -> None:
    with psycopg.connect(f"{SERVER}/{database}", autocommit=True) as connection:
        connection.execute(f"VACUUM {', '.join(CHURNED)}")


def _phase(paths: list[str], *, clients: int, seconds: float) -> tuple[list[float], int, float]:
    spent: list[float] = []
    errors = 0
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client(number: int) -> None:
        nonlocal errors
        with httpx.Client(base_url=BASE, timeout=60) as http:
            i = number
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                try:
                    failed = http.get(paths[i % len(paths)]).status_code != 200
                except httpx.HTTPError:
                    failed = True  # a timeout or a dropped connection: counted, not fatal
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    spent.append(elapsed)
                    errors += failed
                i += clients  # clients never ask the same path of a many-path target

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return spent, errors, time.perf_counter() - started


def load(
    database: str,
    phases: dict[str, list[str]],
    *,
    clients: int,
    seconds: float,
    response_cache: bool,
) -> dict[str, float]:
    """`clients` at once on each target in turn for `seconds`; p95 ms per target."""
    cached = "response cache ON" if response_cache else "response cache off"
    shape = f"{WORKERS} workers × {THREADS} threads"
    print(f"\n{clients} clients via gunicorn ({shape}, {cached}), {seconds:.0f} s each:")
    results = {}
    with gunicorn(database, response_cache=response_cache):
        for name, paths in phases.items():
            vacuum_churned(database)
            _phase(paths[:1], clients=clients, seconds=0.5)  # warm both workers
            spent, errors, wall = _phase(paths, clients=clients, seconds=seconds)
            ordered = sorted(spent)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            results[name] = p95
            verdict = "ok" if p95 <= 250 else "MISSES the 250 ms target"
            print(
                f"  {name:<24} p50 {statistics.median(ordered):7.1f} ms  p95 {p95:7.1f} ms  "
                f"{len(spent) / wall:6.1f} req/s  {errors} errors  {verdict}",
                flush=True,
            )
    return results


def export_year(database: str) -> None:
    since = (datetime.now(UTC) - timedelta(days=365)).isoformat()
    with psycopg.connect(f"{SERVER}/{database}") as connection:
        expected = connection.execute(
            "SELECT count(*) FROM benchmarks_sample s JOIN benchmarks_run r ON r.id = s.run_id "
            "WHERE r.slot >= %s",
            [since],
        ).fetchone()[0]
    digest = hashlib.sha256()
    lines = 0
    pending = b""
    started = time.perf_counter()
    with (
        gunicorn(database),
        httpx.stream(
            "GET", f"{BASE}/api/v1/export/samples.csv", params={"since": since}, timeout=600.0
        ) as response,
    ):
        for chunk in response.iter_bytes(1 << 20):
            lines += chunk.count(b"\n")
            pending += chunk
            # Hash every line but the newest complete one: the last line must be the footer.
            end = pending.rfind(b"\n", 0, len(pending) - 1)
            if end >= 0:
                digest.update(pending[: end + 1])
                pending = pending[end + 1 :]
    seconds = time.perf_counter() - started
    footer = pending.decode().strip()
    complete = footer.startswith("# end of export: ")
    rows = int(footer.removeprefix("# end of export: ").split(" ")[0]) if complete else -1
    checksum_ok = complete and footer.rsplit(" ", 1)[-1] == digest.hexdigest()
    verdict = "complete" if rows == expected == lines - 2 and checksum_ok else "INCOMPLETE"
    print(
        f"\nyear of samples via gunicorn: {rows:,} rows in the footer, {lines - 2:,} data lines "
        f"received, {expected:,} in the database, checksum {'ok' if checksum_ok else 'BAD'}, "
        f"{seconds:.1f} s → {verdict}"
    )
