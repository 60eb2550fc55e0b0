"""Time a whole evaluation after a run (alerts.lifecycle.evaluate.evaluate_after_run) in PostgreSQL.

Creates a throwaway database (Django's test-database machinery, named `bench_<NAME>`), stores
a full baseline window of history (ALERTS_BASELINE_DAYS plus the 72 h window and a day) for one
endpoint × workload × vantage (3 runs a day, or --runs-per-day, 5 samples each) plus
four more endpoints serving the same model (so the alert email's peer table has work to do),
analyzes the tables (as autovacuum has in a live database, so the queries get real plans),
then evaluates RUNS further runs one by one, the first few of them slower (so alerts open and
snapshots are written too), and reports the median and worst time per evaluation.

    DATABASE_URL=postgres://… python bench/evaluation_time.py [--runs 30] [--runs-per-day 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

T0 = datetime(2026, 3, 10, 18, 0, tzinfo=UTC)


def _populate(hours: tuple[int, ...]):
    from alerts.testing import daily_slots, store_history
    from benchmarks.models import Vantage, Workload
    from providers.models import Endpoint, Provider

    workload = Workload.objects.create(slug="w", name="Standard prompt")
    vantage = Vantage.objects.create(slug="eu", label="EU probe", queue="eu")
    endpoints = []
    for k in range(5):
        provider = Provider.objects.create(
            slug=f"p{k}", name=f"P{k}", protocol="openai_chat", base_url="https://x.example/v1"
        )
        endpoints.append(Endpoint.objects.create(provider=provider, slug=f"p{k}-m", model="m"))
    for k, endpoint in enumerate(endpoints):
        store_history(
            endpoint=endpoint,
            workload=workload,
            vantage=vantage,
            slots=daily_slots(end=T0, days=settings.ALERTS_BASELINE_DAYS + 4, hours=hours),
            decode=lambda s: 70.0,
            ttft=lambda s: 600.0,
            noise=0.15,
            seed=k,
        )
    return {"endpoint": endpoints[0], "workload": workload, "vantage": vantage}


def time_evaluations(runs: int = 30, runs_per_day: int = 3) -> str:
    """'median X ms, worst Y ms (N evaluations)' for whole evaluations after a run, on a
    schedule of `runs_per_day` evenly spaced runs (a divisor of 24)."""
    from alerts.lifecycle.evaluate import evaluate_after_run
    from alerts.testing import store_history

    # Its own throwaway database, never the test suite's (they may run at the same time).
    connection.settings_dict.setdefault("TEST", {})
    connection.settings_dict["TEST"]["NAME"] = f"bench_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        gap = 24 // runs_per_day
        series = _populate(tuple(sorted((T0.hour + k * gap) % 24 for k in range(runs_per_day))))
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # as autovacuum has in a live database: real plans
        seconds = []
        for k in range(runs):
            slot = T0 + timedelta(hours=gap * (k + 1))
            factor = 0.7 if k < runs // 3 else 1.0  # open, hold, then resolve
            [run] = store_history(
                **series,
                slots=[slot],
                decode=lambda s, f=factor: 70.0 * f,
                ttft=lambda s: 600.0,
                noise=0.15,
                seed=100 + k,
            )
            began = time.perf_counter()
            evaluate_after_run(run.id)
            seconds.append(time.perf_counter() - began)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    ms = np.array(seconds) * 1e3
    return f"median {np.median(ms):.1f} ms, worst {ms.max():.1f} ms ({len(ms)} evaluations)"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--runs-per-day", type=int, default=3, choices=(1, 2, 3, 4, 6, 8, 12, 24))
    args = parser.parse_args()
    print("whole evaluation after a run:", time_evaluations(args.runs, args.runs_per_day))
