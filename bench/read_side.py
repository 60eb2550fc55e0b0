"""How fast do the read side's pages and API answer with a year of history?

    python bench/read_side.py [--endpoints 100] [--days 365] [--workloads 4] [--slots 3]
                              [--samples-per-run 5] [--requests 40] [--reseed] [--explain]

Seeds its own PostgreSQL database `tokspeed_readside` on 127.0.0.1:5432 (dropped and created
again unless it holds exactly the history asked for) with SYNTHETIC history — by default 100
endpoints × 4 workloads × 3 slots a day × 365 days (≈ 440,000 runs, 2.2 million samples) — then
times requests through Django's test client (the whole middleware and view stack, no network):

- leaderboard API  GET /api/v1/leaderboard/          (default filters and long context; then both
                                                     again over 30 d, reported apart)
- leaderboard page GET /                             (the same four)
- endpoint page    GET /endpoints/<slug>/            (endpoints in turn)
- history API      GET /api/v1/endpoints/<slug>/history/
- agent-loop API, price page, runs list (first page and a cursor 300 days deep)

each over windows up to 365 d (90 d and 365 d from rollup sketches). With --gunicorn it also
starts gunicorn (gunicorn.conf.py, 2 threaded workers) and times 8 concurrent clients
(bench/gunicorn_load.py), then exports a year of samples through it, checking the row count
against the database and the footer's checksum against the bytes received.

and prints p50 / p95 / max per target (goal: p95 ≤ 100 ms each), the row counts and the
database size. --explain prints EXPLAIN ANALYZE of the slowest query of each slow target.
"""

from __future__ import annotations

import argparse
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
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    if not fresh:
        from benchmarks.models import RunRollup

        print(f"reusing the synthetic history in {args.database}")
        if not RunRollup.objects.exists():
            started = time.perf_counter()
            call_command("rebuild_rollups")
            print(f"rollups rebuilt in {time.perf_counter() - started:.0f} s")
        from benchmarks.rollups import windows

        started = time.perf_counter()
        if windows.refresh():  # today's window rollups, as the beat task keeps them
            print(f"window rollups refreshed in {time.perf_counter() - started:.0f} s")
        return
    started = time.perf_counter()
    call_command(
        "seed_history",
        endpoints=args.endpoints,
        days=args.days,
        workloads=args.workloads,
        slots=args.slots,
        samples_per_run=args.samples_per_run,
    )
    print(f"seeded in {time.perf_counter() - started:.0f} s")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # fresh statistics, as autovacuum would give later


def timings(client, paths: list[str], *, requests: int) -> list[float]:
    """Milliseconds per request, cycling through `paths` after one warm-up pass."""
    for path in paths:
        response = client.get(path)
        if response.status_code != 200:
            raise SystemExit(f"GET {path} answered {response.status_code}")
    spent = []
    for number in range(requests):
        path = paths[number % len(paths)]
        started = time.perf_counter()
        response = client.get(path)
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
        else:
            _ = response.content
        spent.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return spent


def database_share(client, paths: list[str]) -> tuple[float, int]:
    """Median milliseconds spent in SQL per request, and queries per request."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    spent, counts = [], []
    for path in paths[:5]:
        with CaptureQueriesContext(connection) as captured:
            client.get(path)
        spent.append(sum(float(q["time"]) for q in captured.captured_queries) * 1000)
        counts.append(len(captured.captured_queries))
    return statistics.median(spent), max(counts)


def report(name: str, spent: list[float], sql_ms: float, queries: int) -> bool:
    ordered = sorted(spent)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    ok = p95 <= TARGET_P95_MS
    verdict = "ok" if ok else f"MISSES the {TARGET_P95_MS:.0f} ms target"
    figures = f"p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  max {ordered[-1]:6.1f} ms"
    print(f"  {name:<20} {figures}  (SQL {sql_ms:5.1f} ms, {queries} queries)  {verdict}")
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
            "pg_size_pretty(pg_total_relation_size('benchmarks_sample'))"
        )
        size, runs, samples, run_size, sample_size = cursor.fetchone()
    print(f"  database {size}: {runs:,} runs ({run_size}), {samples:,} samples ({sample_size})")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoints", type=int, default=100)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--workloads", type=int, default=4)
    parser.add_argument("--slots", type=int, default=3)
    parser.add_argument("--samples-per-run", type=int, default=5)
    parser.add_argument("--requests", type=int, default=40, help="Timed requests per target.")
    parser.add_argument("--reseed", action="store_true", help="Seed again even if present.")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN the slow targets.")
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument(
        "--gunicorn", action="store_true", help="Also 8 clients via gunicorn, and a year export."
    )
    parser.add_argument("--load-seconds", type=float, default=15.0)
    parser.add_argument("--gunicorn-only", action="store_true", help="Skip the in-process timings.")
    parser.add_argument(
        "--response-cache",
        action="store_true",
        help="Time with the shared response cache on (default off: every request runs its "
        "queries); gunicorn's load is timed both ways.",
    )
    parser.add_argument("--skip-export", action="store_true", help="No year export via gunicorn.")
    return parser.parse_args()


def targets_for(slugs: list[str]) -> dict[str, list[str]]:
    """The timed pages and API calls: name -> the paths requested in turn."""
    targets: dict[str, list[str]] = {}
    for window in ("72h", "7d", "30d", "90d", "365d"):
        queries = [f"?window={window}", f"?window={window}&workload=long-context&sort=ttft"]
        targets[f"leaderboard API {window}"] = [f"/api/v1/leaderboard/{q}" for q in queries]
        targets[f"leaderboard page {window}"] = [f"/{q}" for q in queries]
    for window in ("7d", "30d", "90d", "365d"):
        chosen = "&".join(f"e={slug}" for slug in slugs[:4])
        targets[f"compare page {window}"] = [f"/compare/?window={window}&{chosen}"]
    for window in ("30d", "365d"):
        targets[f"agent-loop API {window}"] = [f"/api/v1/agent-loop/?window={window}"]
        targets[f"price page {window}"] = [f"/price/?window={window}"]
        targets[f"endpoint page {window}"] = [f"/endpoints/{s}/?window={window}" for s in slugs]
        targets[f"history API {window}"] = [
            f"/api/v1/endpoints/{s}/history/?window={window}" for s in slugs
        ]
    targets["runs list first page"] = ["/api/v1/runs/", "/api/v1/runs/?endpoint=" + slugs[0]]
    targets["runs list deep page"] = deep_runs_pages(slugs[0])
    return targets


def main() -> int:
    args = parse_args()
    os.environ["TOKSPEED_RESPONSE_CACHE"] = "1" if args.response_cache else "0"
    expected = args.endpoints * args.workloads * args.days * args.slots
    fresh = args.reseed or synthetic_runs(args.database) != expected
    configure(args.database, fresh=fresh)

    import django

    django.setup()
    from django.test import Client

    from providers.models import Endpoint

    seed(args, fresh=fresh)
    client = Client(HTTP_HOST="localhost")
    slugs = list(
        Endpoint.objects.filter(runs__isnull=False).distinct().values_list("slug", flat=True)[:10]
    )
    targets = targets_for(slugs)
    cached = (
        "response cache ON: repeats are served from it"
        if args.response_cache
        else ("no response cache: every request runs its queries")
    )
    print(
        f"\nread side, {args.requests} requests per target (Django test client, in process; "
        f"{cached}):"
    )
    slow: list[Callable[[], None]] = []
    for name, paths in targets.items() if not args.gunicorn_only else []:
        spent = timings(client, paths, requests=args.requests)
        if not report(name, spent, *database_share(client, paths)):
            slow.append(lambda paths=paths: explain_slowest(client, paths[0]))
    sizes()
    if args.gunicorn_only or args.gunicorn:
        from gunicorn_load import export_year, load

        for response_cache in (False, True):
            load(
                args.database,
                clients=8,
                seconds=args.load_seconds,
                response_cache=response_cache,
                slug=slugs[0],
            )
        if not args.skip_export:
            export_year(args.database)
    if args.explain:
        for explain in slow:
            explain()
    return 0 if not slow else 1


if __name__ == "__main__":
    raise SystemExit(main())
