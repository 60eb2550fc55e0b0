"""How fast do the read side's pages and API answer with a year of history, at 1×, 2× and 4×?

    python bench/read_side.py --scales 1,2,4 --source 14 [--endpoints 100] [--requests 20]
                              [--load-seconds 4] [--only NAME]
    python bench/read_side.py [--database D] [--endpoints 100] [--days 365] [--workloads 4]
                              [--slots 3] [--samples-per-run 5] [--source N] [--grow-from DB]
                              [--requests 40] [--reseed] [--explain] [--gunicorn]

Uses its own PostgreSQL databases (`tokspeed_readside`, or `tokspeed_readside_<n>x` per scale)
on 127.0.0.1:5432 with SYNTHETIC history — by default 100 endpoints × 4 workloads × 3 slots a
day × 365 days (438,000 runs, 2.2 million samples; 4× is 400 endpoints: 1.75 M runs, 8.8 M
samples). --source N generates N endpoints with seed_history and copies them to the rest in SQL
(read_side_data.py: generating a year takes ~20 s per endpoint on a busy two-core machine); a
larger scale starts as a copy of the smaller one's database. Then, with the response cache OFF
(every request runs its queries), it times every read at every window (72 h, 7 d, 30 d, 90 d,
365 d): leaderboard API and page, endpoint page, history API, compare page (4 endpoints), runs
list (API first page, a cursor 300 days deep, the page), a cold advice question, agent loop and
price — with 1 client through Django's test client (the whole middleware and view stack, no
network; p95 ≤ 100 ms each) and, with --gunicorn, 8 clients through gunicorn (gunicorn.conf.py, 2
threaded workers; p95 ≤ 250 ms each), then exports a year of samples through it (unless
--skip-export), checking the row count and checksum. --scales prints the growth of each p95
from the first scale to the last and names the reads that grow with the data
(read_side_scales.py). --explain prints EXPLAIN ANALYZE of the slowest query of each slow target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATABASE = "tokspeed_readside"
SERVER = "postgresql://postgres@127.0.0.1:5432"
TARGET_P95_MS = 100.0


def synthetic_runs(database: str) -> int | None:
    """Synthetic runs already in the database (None: no database or no tables yet)."""
    import psycopg

    try:
        with psycopg.connect(f"{SERVER}/{database}") as connection:
            row = connection.execute(
                "SELECT count(*) FROM benchmarks_run WHERE client_version = 'synthetic'"
            ).fetchone()
            return row[0]
    except psycopg.Error:
        return None


def configure(database: str, *, fresh: bool) -> None:
    """Our own database (dropped and created again when `fresh`), public pages, no throttle;
    set before Django loads its settings."""
    import psycopg

    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as connection:
        if fresh:
            connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [database]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{database}"')
    os.environ["DATABASE_URL"] = f"{SERVER}/{database}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "tokspeed.settings"
    os.environ["TOKSPEED_PUBLIC_DASHBOARD"] = "1"
    os.environ["TOKSPEED_THROTTLE_ANON"] = "1000000/min"
    os.environ.setdefault("TOKSPEED_RESPONSE_CACHE", "0")
    os.environ.setdefault("TOKSPEED_VAR_DIR", str(ROOT / "var" / "bench-read-side"))
    # Sessions and messages sign cookies; a bench has no install secret (`manage.py up`).
    os.environ.setdefault("SECRET_KEY", "bench-only-" + os.urandom(16).hex())
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))


def seed(args: argparse.Namespace, *, fresh: bool) -> None:
    """Seed `--source` endpoints (all of them if --source is 0), copy them to `--endpoints`
    (read_side_data.grow), rebuild rollups if absent, refresh today's window rollups and the
    materialized board, and write the 72 h / 7 d board rows that are not exact now."""
    from django.core.management import call_command
    from django.db import connection

    from benchmarks.models import RunRollup
    from benchmarks.rollups import windows

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    if fresh:
        call_command(
            "seed_history",
            endpoints=args.source or args.endpoints,
            days=args.days,
            workloads=args.workloads,
            slots=args.slots,
            samples_per_run=args.samples_per_run,
        )
        print(f"seeded in {time.perf_counter() - started:.0f} s", flush=True)
    else:
        print(f"reusing the synthetic history in {args.database}", flush=True)
    if not RunRollup.objects.exists():
        call_command("rebuild_rollups")
    grown = synthetic_runs(args.database) != expected_runs(args)
    if grown:
        from read_side_data import grow

        print(f"copied to {args.endpoints} endpoints in {grow(args.endpoints):.0f} s", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")  # fresh statistics, as autovacuum would give later
    elif fresh:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    if windows.refresh():  # today's window rollups, as the beat task keeps them
        print("window rollups refreshed", flush=True)
    from benchmarks.selectors import materialized_write

    board_started = time.perf_counter()
    if written := materialized_write.refresh(force=grown):  # and then the day's materialized board
        took = time.perf_counter() - board_started
        print(f"board figures written: {written:,} rows in {took:.1f} s", flush=True)
    from benchmarks.selectors import window_figures_write

    window_started = time.perf_counter()
    if written := window_figures_write.refresh(force=grown):  # the 72 h / 7 d boards' rows
        took = time.perf_counter() - window_started
        print(f"window figures written: {written:,} rows in {took:.1f} s", flush=True)
    from advisor.models import DayDigest, RunDigest

    if fresh or grown or not RunDigest.objects.exists() or not DayDigest.objects.exists():
        call_command("advisor_digest")
    print(f"history ready in {time.perf_counter() - started:.0f} s", flush=True)


def expected_runs(args: argparse.Namespace) -> int:
    return args.endpoints * args.workloads * args.days * args.slots


def backend_cpu_ns() -> int:
    """CPU time of this process's PostgreSQL backend so far (same machine: /proc schedstat,
    nanoseconds); 0 when it cannot be read."""
    from django.db import connection

    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def timings(client, paths: list[str], *, requests: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds per request (CPU: this process's and its database backend's:
    the request's own work, which a loaded shared machine does not inflate), cycling through
    `paths` after one warm-up pass over the first three (a target of many paths, such as new
    advice questions, is timed on unseen ones)."""
    warm = paths[:3]
    for path in warm:
        response = client.get(path)
        if response.status_code != 200:
            raise SystemExit(f"GET {path} answered {response.status_code}")
    spent, cpu = [], []
    for number in range(requests):
        path = paths[(number + len(warm)) % len(paths)]
        cpu_started, db_started = time.process_time_ns(), backend_cpu_ns()
        started = time.perf_counter()
        response = client.get(path)
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
        else:
            _ = response.content
        spent.append((time.perf_counter() - started) * 1000)
        used = time.process_time_ns() - cpu_started + backend_cpu_ns() - db_started
        cpu.append(used / 1e6)
        assert response.status_code == 200, (path, response.status_code)
    return spent, cpu


def database_share(client, paths: list[str]) -> tuple[float, int]:
    """Median milliseconds spent in SQL per request, and queries per request."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    spent, counts = [], []
    for path in paths[-2:]:  # unseen by timings() when a target has many paths
        with CaptureQueriesContext(connection) as captured:
            client.get(path)
        spent.append(sum(float(q["time"]) for q in captured.captured_queries) * 1000)
        counts.append(len(captured.captured_queries))
    return statistics.median(spent), max(counts)


def p95(spent: list[float]) -> float:
    ordered = sorted(spent)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def report(name: str, spent: list[float], cpu: list[float], sql_ms: float, queries: int) -> bool:
    ok = p95(spent) <= TARGET_P95_MS
    verdict = "ok" if ok else "MISSES"
    cpu_verdict = "ok" if p95(cpu) <= TARGET_P95_MS else "MISSES"
    figures = f"p50 {statistics.median(spent):6.1f}  p95 {p95(spent):6.1f} ms {verdict:<6}"
    print(
        f"  {name:<26} {figures}  CPU p95 {p95(cpu):6.1f} ms {cpu_verdict:<6}"
        f"  (SQL {sql_ms:5.1f} ms, {queries} queries)",
        flush=True,
    )
    return ok


def explain_slowest(client, path: str) -> None:
    """EXPLAIN ANALYZE of the slowest SQL statement of one request."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        client.get(path)
    slowest = max(captured.captured_queries, key=lambda q: float(q["time"]))
    print(
        f"\n  slowest query of {path} ({float(slowest['time']) * 1000:.0f} ms of "
        f"{len(captured.captured_queries)} queries):"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {slowest['sql']}")
        for (line,) in cursor.fetchall():
            print(f"    {line}")


def deep_runs_pages(slug: str) -> list[str]:
    """Cursors 300 days back (page ~2,500 of the whole list): what OFFSET paging made slow."""
    from datetime import timedelta

    from django.utils import timezone

    from benchmarks.models import Run
    from dashboard.api.keyset import OLDER, encode_cursor

    run = Run.objects.filter(slot__lte=timezone.now() - timedelta(days=300)).order_by("-slot")[0]
    cursor = encode_cursor(OLDER, run.slot, run.id)
    return [f"/api/v1/runs/?cursor={cursor}", f"/api/v1/runs/?endpoint={slug}&cursor={cursor}"]


def sizes() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_size_pretty(pg_database_size(current_database())), "
            "(SELECT count(*) FROM benchmarks_run), (SELECT count(*) FROM benchmarks_sample), "
            "pg_size_pretty(pg_total_relation_size('benchmarks_run')), "
            # Samples are partitioned by month: the parent holds nothing, its partitions all.
            "(SELECT pg_size_pretty(sum(pg_total_relation_size(relid))) "
            "FROM pg_partition_tree('benchmarks_sample'))"
        )
        size, runs, samples, run_size, sample_size = cursor.fetchone()
    print(f"  database {size}: {runs:,} runs ({run_size}), {samples:,} samples ({sample_size})")


def targets_of(slugs: list[str]) -> dict[str, list[str]]:
    """Every read of the issue, at every window to 365 days: leaderboard (API and page),
    endpoint page, history API, compare, runs list (API and page), advice, agent loop, price."""
    targets: dict[str, list[str]] = {}
    chosen = "&".join(f"e={slug}" for slug in slugs[:4])
    for window in WINDOWS:
        queries = [f"?window={window}", f"?window={window}&workload=long-context&sort=ttft"]
        targets[f"leaderboard API {window}"] = [f"/api/v1/leaderboard/{q}" for q in queries]
        targets[f"leaderboard page {window}"] = [f"/{q}" for q in queries]
        targets[f"endpoint page {window}"] = [f"/endpoints/{s}/?window={window}" for s in slugs]
        targets[f"history API {window}"] = [
            f"/api/v1/endpoints/{s}/history/?window={window}" for s in slugs
        ]
        targets[f"compare page {window}"] = [f"/compare/?window={window}&{chosen}"]
    for window in ("30d", "365d"):
        targets[f"agent-loop API {window}"] = [f"/api/v1/agent-loop/?window={window}"]
        targets[f"price page {window}"] = [f"/price/?window={window}"]
    targets["runs list API first page"] = ["/api/v1/runs/", "/api/v1/runs/?endpoint=" + slugs[0]]
    targets["runs list API deep page"] = deep_runs_pages(slugs[0])
    targets["runs page"] = ["/runs/", f"/runs/?endpoint={slugs[0]}"]
    # Advice has a cache of its own (advisor.serving): a new question each time is a cold read.
    # Its key is the question, the data and a ten-minute clock, and it outlives this process
    # (the database or Redis): each run starts at a random size, or a second run within ten
    # minutes timed the first one's answers (12 queries instead of 19).
    first = 3000 + int.from_bytes(os.urandom(3), "big") % 1_000_000
    targets["advice API (cold)"] = [
        f"/api/v1/advice/?input_tokens={first + n}&output_tokens=700&calls=5&tool_s=1"
        for n in range(2000)
    ]
    return targets


WINDOWS = ("72h", "7d", "30d", "90d", "365d")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoints", type=int, default=100)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--workloads", type=int, default=4)
    parser.add_argument("--slots", type=int, default=3)
    parser.add_argument("--samples-per-run", type=int, default=5)
    parser.add_argument(
        "--source",
        type=int,
        default=0,
        help="Generate only this many endpoints and copy them to --endpoints (0: generate all).",
    )
    parser.add_argument("--requests", type=int, default=40, help="Timed requests per target.")
    parser.add_argument("--reseed", action="store_true", help="Seed again even if present.")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN the slow targets.")
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--grow-from", default="", help="Start as a copy of this database.")
    parser.add_argument(
        "--scales",
        default="",
        help="e.g. 1,2,4: run at each multiple of --endpoints (databases DATABASE_<n>x), each "
        "grown from the one before, then print how each read's p95 grows.",
    )
    parser.add_argument("--prepare-only", action="store_true", help="Make the history; no timing.")
    parser.add_argument("--json", default="", help="Write each target's p95s to this file.")
    parser.add_argument("--only", default="", help="Only targets whose name contains this.")
    parser.add_argument(
        "--gunicorn", action="store_true", help="Also 8 clients via gunicorn, and a year export."
    )
    parser.add_argument("--load-seconds", type=float, default=4.0, help="Per target, 8 clients.")
    parser.add_argument("--gunicorn-only", action="store_true", help="Skip the in-process timings.")
    parser.add_argument(
        "--response-cache",
        action="store_true",
        help="Time with the shared response cache on (default off: every request runs its "
        "queries).",
    )
    parser.add_argument("--skip-export", action="store_true", help="No year export via gunicorn.")
    parser.add_argument(
        "--no-gc-freeze",
        action="store_true",
        help="Time without tokspeed.warm's frozen heap (gunicorn.conf.py freezes each worker's).",
    )
    return parser.parse_args()


def main() -> int:
    args = arguments()
    if args.scales:
        from read_side_scales import run_scales

        return run_scales(args)
    os.environ["TOKSPEED_RESPONSE_CACHE"] = "1" if args.response_cache else "0"
    present = synthetic_runs(args.database)
    fresh = args.reseed or not present
    if fresh and args.grow_from and synthetic_runs(args.grow_from):
        clone(args.grow_from, args.database)
        fresh = False
    configure(args.database, fresh=fresh)

    import django

    django.setup()
    from django.test import Client

    from providers.models import Endpoint

    seed(args, fresh=fresh)
    if args.prepare_only:
        sizes()
        return 0
    if not args.no_gc_freeze:
        from tokspeed.warm import warm_and_freeze

        warm_and_freeze()  # as gunicorn.conf.py's workers do
    client = Client(HTTP_HOST="localhost")
    slugs = list(
        Endpoint.objects.filter(runs__isnull=False).distinct().values_list("slug", flat=True)[:10]
    )
    targets = {k: v for k, v in targets_of(slugs).items() if args.only in k}
    results: dict[str, dict[str, float]] = {name: {} for name in targets}
    slow: list[Callable[[], None]] = []
    if not args.gunicorn_only:
        cached = "response cache ON" if args.response_cache else "no response cache"
        print(
            f"\n1 client, {args.requests} requests per target (in process; {cached}; "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs); p95 ≤ "
            f"{TARGET_P95_MS:.0f} ms, wall and CPU (this process + its database backend):"
        )
        from gunicorn_load import vacuum_churned

        for name, paths in targets.items():
            vacuum_churned(args.database)
            spent, cpu = timings(client, paths, requests=args.requests)
            results[name]["c1"] = p95(spent)
            results[name]["cpu"] = p95(cpu)
            if not report(name, spent, cpu, *database_share(client, paths)):
                slow.append(lambda paths=paths: explain_slowest(client, paths[0]))
    sizes()
    if args.gunicorn_only or args.gunicorn:
        from gunicorn_load import export_year, load

        for name, value in load(
            args.database, targets, clients=8, seconds=args.load_seconds, response_cache=False
        ).items():
            results[name]["c8"] = value
        if not args.skip_export:
            export_year(args.database)
    if args.json:
        Path(args.json).write_text(json.dumps(results))
    if args.explain:
        for explain in slow:
            explain()
    return 0 if not slow else 1


def clone(template: str, database: str) -> None:
    """`database` as a copy of `template` (files copied by PostgreSQL: seconds, not a seed)."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{database}" TEMPLATE "{template}" STRATEGY FILE_COPY')
    print(f"{database}: a copy of {template} in {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
