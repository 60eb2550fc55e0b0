"""A run whose database stays away longer than the worker's patience (TOKSPEED_DB_OUTAGE_S):
the task gives up on this execution, is retried once the run's lease has run out, and the
retry resumes the run from the samples it stored. Nothing lost, and never "worker was lost"."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection
from django.test import override_settings

from benchmarks import dispatch, runner
from benchmarks.models import Run, RunStatus, Workload
from benchmarks.resilience import DISCONNECTS
from tests.benchmarks.test_runner import make_run
from tests.celery_helpers import (
    FILESYSTEM_URL,
    broker,
    filesystem_options,
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


@override_settings(TOKSPEED_DB_OUTAGE_S=1, TOKSPEED_RUN_LEASE_S=1)
def test_it_stops_streaming_when_its_sample_writer_gives_up_on_the_database(
    simulator, monkeypatch, tmp_path
) -> None:
    # 12 rounds of ~0.5 s. The database goes away for 3 s, three times the worker's patience,
    # and is back long before the rounds would end. The writer thread (samples, heartbeats)
    # gives up on it: the execution stops at the next round instead of streaming on with no
    # heartbeat (the run would look free to another run of the endpoint) and no one to store
    # what it measures, and hands the run back to be retried, not failed. The retry, after the
    # lease, resumes it from the samples stored.
    run = make_run(simulator, "sim-fast+tokens=20+tps=40+ttft=20", repetitions=12)
    rounds_started: list[bool] = []
    real_burst = runner.measure_burst

    async def counting_burst(*args, **kwargs):
        rounds_started.append(True)
        return await real_burst(*args, **kwargs)

    monkeypatch.setattr(runner, "measure_burst", counting_burst)
    ended: list[object] = []

    def work() -> None:
        try:
            ended.append(runner.execute(run.id, worker="w1"))
        except DISCONNECTS as exc:
            ended.append(exc)
        finally:
            connection.close()  # this thread's own

    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):  # evaluations go here
        first = threading.Thread(target=work)
        first.start()
        wait_for(lambda: run.samples.exists(), timeout=30, message="no sample", interval=0.05)
        with database_outage():
            time.sleep(3)
            during = len(rounds_started)
        first.join(timeout=60)
        streamed = len(rounds_started)
        resumed = _resume_after_the_lease(run)

    assert ended and isinstance(ended[0], DISCONNECTS), f"the execution ended with {ended}"
    assert streamed <= during + 1, "it kept streaming after its writer gave up"
    assert resumed == RunStatus.DONE, "the retry did not finish the run"
    indices = list(run.samples.order_by("index").values_list("index", flat=True))
    assert indices == list(range(12))


def _resume_after_the_lease(run: Run) -> str:
    """What the task's retry does: once the lease has run out, execute the run again."""
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.failure_reason == "", run.failure_reason
    time.sleep(1.1)  # the 1 s lease runs out
    return runner.execute(run.id, worker="w2")
