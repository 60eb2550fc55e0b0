"""A run whose database stays away longer than the worker's patience (TOKSPEED_DB_OUTAGE_S):
the task gives up on this execution, is retried once the run's lease has run out, and the
retry resumes the run from the samples it stored. Nothing lost, and never "worker was lost"."""

from __future__ import annotations

import pytest

from benchmarks import dispatch
from benchmarks.models import Run, RunStatus, Workload
from tests.celery_helpers import (
    broker,
    probe_vantage,
    sim_endpoint,
    start_worker,
    wait_ended,
    wait_for,
    workers,
)
from tests.fault_helpers import database_outage, kill_backends, redis_server

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_retries_a_run_whose_database_outage_outlasts_the_workers_patience(simulator) -> None:
    # 4 rounds of ~1 s. The worker waits 2 s for the database (TOKSPEED_DB_OUTAGE_S), which
    # stays away until the worker has given up: execute_run gives up on the execution and
    # retries it after the 3 s lease.
    work = Workload.objects.create(slug="f-retry", name="f", concurrency=2, repetitions=4)
    slow = sim_endpoint(simulator, "sim-fast+tokens=40+tps=40+ttft=50")
    probes = probe_vantage()
    with (
        redis_server() as own_redis,
        broker(own_redis.url),
        workers(
            start_worker(
                name="w-retry",
                queues=[probes.queue],
                broker_url=own_redis.url,
                TOKSPEED_DB_OUTAGE_S="2",
                TOKSPEED_RUN_LEASE_S="3",
            )
        ) as (probe,),
    ):
        run = dispatch.queue_run_now(endpoint=slow, workload=work, vantage=probes)
        wait_for(
            lambda: run.samples.exists(),
            timeout=30,
            message=lambda: probe.output()[-2000:],
            interval=0.05,
        )
        stored_before = run.samples.count()
        with database_outage():
            wait_for(
                lambda: "database unreachable; resuming it later" in probe.output(),
                timeout=60,
                message=lambda: "the worker never gave up on the run:\n" + probe.output()[-2000:],
            )
            assert kill_backends() == 0  # nobody got back in during the outage
        [run] = wait_ended([run.id], timeout=90, procs=[probe])
    assert "database unreachable; resuming it later" in probe.output()
    assert run.status == RunStatus.DONE, run.failure_reason
    assert "lost" not in run.failure_reason
    assert run.attempts >= 2  # a second execution resumed it
    # Every sample stored once: the ones from before the outage kept, the rest measured after.
    indices = list(run.samples.order_by("index").values_list("index", flat=True))
    assert indices == list(range(run.expected_samples)) and stored_before >= 1
    assert run.ok_count == run.expected_samples
    assert Run.objects.count() == 1
