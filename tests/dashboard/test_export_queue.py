"""Background exports run on their own queue ("exports") and worker: a central worker (tick,
evaluations) never picks one up, and the tick runs while an export is being built."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from benchmarks.models import Export, ExportStatus, Run, Workload
from dashboard.exports import jobs
from dashboard.tasks import build_export
from tests.celery_helpers import (
    broker,
    due_schedule,
    probe_vantage,
    sim_endpoint,
    start_worker,
    wait_for,
    worker_database_url,
    workers,
)
from tests.fault_helpers import redis_server
from tokspeed.celery import app as current_app

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CENTRAL = "tokspeed"


def blocked_on_a_lock(url: str) -> bool:
    """A backend of the test database waits on a row lock (the export worker's claim)."""
    with psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True) as c:
        return bool(
            c.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query ILIKE '%benchmarks_export%'"
            ).fetchone()[0]
        )


def test_it_builds_exports_on_their_own_worker_while_the_tick_runs(simulator, tmp_path) -> None:
    work = Workload.objects.create(slug="x-tick", name="x", concurrency=1, repetitions=1)
    probes = probe_vantage()
    due_schedule(probes, work, [sim_endpoint(simulator, "sim-fast+tokens=20+ttft=20")])
    user = get_user_model().objects.create_user("viewer")
    url = worker_database_url()
    export_env = {"TOKSPEED_EXPORT_DIR": str(tmp_path)}
    with (
        redis_server() as own_redis,
        broker(own_redis.url),
        workers(start_worker(name="x-central", queues=[CENTRAL], broker_url=own_redis.url)) as (
            central,
        ),
    ):
        export = jobs.request_export(kind="runs", file_format="csv.gz", filters={}, user=user)
        build_export.delay(export.id)
        time.sleep(3)
        # Only the central worker runs: the export waits on its own queue, untouched.
        assert Export.objects.get(id=export.id).status == ExportStatus.PENDING
        queue = settings.TOKSPEED_EXPORT_QUEUE
        assert own_redis.client().llen(queue) == 1 and own_redis.client().llen(CENTRAL) == 0
        # Hold the export's row: the export worker's claim blocks, the export stays in progress.
        holder = psycopg.connect(url.replace("postgres://", "postgresql://"))
        holder.execute("SELECT id FROM benchmarks_export WHERE id = %s FOR UPDATE", [export.id])
        try:
            with workers(
                start_worker(
                    name="x-exports", queues=[queue], broker_url=own_redis.url, **export_env
                )
            ) as (exporter,):
                wait_for(lambda: blocked_on_a_lock(url), timeout=30,
                         message=lambda: exporter.output()[-2000:])  # fmt: skip
                # The tick runs (and queues its slot) while the export is being built.
                current_app.send_task("benchmarks.tasks.tick", queue=CENTRAL)
                wait_for(lambda: Run.objects.filter(vantage=probes).exists(), timeout=30,
                         message=lambda: central.output()[-2000:])  # fmt: skip
                assert blocked_on_a_lock(url)
                holder.rollback()
                wait_for(
                    lambda: Export.objects.get(id=export.id).status == ExportStatus.DONE,
                    timeout=30,
                    message=lambda: exporter.output()[-2000:],
                )
        finally:
            holder.close()
    assert "dashboard.build_export[" not in central.output()  # never received there
    assert "dashboard.build_export[" in exporter.output()
    assert (tmp_path / Export.objects.get(id=export.id).file_name).exists()
