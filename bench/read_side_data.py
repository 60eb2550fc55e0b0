"""The read-side bench's history at 1×, 2× and 4×, made in minutes on a busy shared machine.

seed_history generates a year per endpoint in numpy (~20 s per endpoint on a loaded two-core
machine: a 4× year of 400 endpoints would take over two hours). So only `source` endpoints are
generated; every other endpoint gets a copy of one of them, re-keyed in SQL: its runs (new ids),
their samples, its day/month rollups and its window rollups. The tables then hold exactly the
rows, sizes and index layout of N generated endpoints — what a read's cost depends on — though
the figures repeat every `source` endpoints. A larger scale starts as a copy of the smaller
database (CREATE DATABASE … TEMPLATE) and only the new endpoints are added.

Run inside a process whose Django points at the database being grown (read_side.py).
"""

from __future__ import annotations

import time

import numpy as np
from django.db import connection, transaction

# Tables copied per endpoint, and the column that points at the endpoint.
_ROLLUPS = ("benchmarks_runrollup", "benchmarks_windowrollup")


def _columns(table: str, *, without: tuple[str, ...]) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
            "ORDER BY ordinal_position",
            [table],
        )
        return [f'"{name}"' for (name,) in cursor.fetchall() if name not in without]


def seeded_endpoint_ids() -> list[int]:
    """Synthetic endpoints with runs, by slug (their seed number)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT e.id FROM providers_endpoint e WHERE e.slug LIKE 'synthetic-%%' AND EXISTS "
            "(SELECT 1 FROM benchmarks_run r WHERE r.endpoint_id = e.id) ORDER BY e.slug"
        )
        return [row[0] for row in cursor.fetchall()]


def grow(endpoints: int, *, seed: int = 1) -> float:
    """Give every synthetic endpoint up to `endpoints` the history of a seeded one; seconds."""
    from benchmarks.synthetic.profiles import ensure_endpoints

    started = time.perf_counter()
    sources = seeded_endpoint_ids()
    if not sources:
        raise SystemExit("grow: no seeded synthetic endpoint to copy")
    # The same catalog seed_history makes (same seed, same slugs, prices and hints).
    catalog = ensure_endpoints(endpoints, np.random.default_rng([seed, 0]))
    seeded = set(sources)
    targets = [endpoint.id for endpoint in catalog if endpoint.id not in seeded]
    # One round copies each source at most once, so a run's new id is its id + one offset.
    for first in range(0, len(targets), len(sources)):
        chunk = targets[first : first + len(sources)]
        with transaction.atomic():
            _copy_round(list(zip(sources, chunk, strict=False)))
        print(
            f"  copied {min(first + len(chunk), len(targets))}/{len(targets)} endpoints, "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
    return time.perf_counter() - started


def _copy_round(pairs: list[tuple[int, int]]) -> None:
    run_columns = _columns("benchmarks_run", without=("id", "endpoint_id"))
    sample_columns = _columns("benchmarks_sample", without=("id", "run_id"))
    runs, samples = ", ".join(run_columns), ", ".join(sample_columns)
    with connection.cursor() as cursor:
        # The copies point at rows that exist: skip the per-row foreign-key triggers (this
        # transaction only; the bench connects as the superuser postgres).
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("CREATE TEMP TABLE copy_map (source bigint, target bigint) ON COMMIT DROP")
        cursor.executemany("INSERT INTO copy_map VALUES (%s, %s)", pairs)
        cursor.execute("SELECT coalesce(max(id), 0) FROM benchmarks_run")
        (offset,) = cursor.fetchone()
        # Table and column names come from information_schema; values stay parameters.
        cursor.execute(
            f"INSERT INTO benchmarks_run (id, endpoint_id, {runs}) "  # noqa: S608
            f"SELECT r.id + %s, m.target, {', '.join('r.' + c for c in run_columns)} "
            "FROM benchmarks_run r JOIN copy_map m ON m.source = r.endpoint_id",
            [offset],
        )
        cursor.execute(
            f"INSERT INTO benchmarks_sample (run_id, {samples}) "  # noqa: S608
            f"SELECT s.run_id + %s, {', '.join('s.' + c for c in sample_columns)} "
            "FROM benchmarks_sample s JOIN benchmarks_run r ON r.id = s.run_id "
            "JOIN copy_map m ON m.source = r.endpoint_id",
            [offset],
        )
        for table in _ROLLUPS:
            columns = _columns(table, without=("id", "endpoint_id"))
            cursor.execute(
                f"INSERT INTO {table} (endpoint_id, {', '.join(columns)}) "  # noqa: S608
                f"SELECT m.target, {', '.join('x.' + c for c in columns)} "
                f"FROM {table} x JOIN copy_map m ON m.source = x.endpoint_id"
            )
        # The peak workload ran at the source's peak concurrency: the copy says the same.
        cursor.execute(
            "UPDATE providers_endpoint t SET peak_concurrency = s.peak_concurrency "
            "FROM copy_map m JOIN providers_endpoint s ON s.id = m.source WHERE t.id = m.target"
        )
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('benchmarks_run', 'id'), "
            "(SELECT max(id) FROM benchmarks_run))"
        )
