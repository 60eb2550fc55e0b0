"""Real Celery workers (subprocesses) execute runs against the simulator, on Redis and on the
embedded filesystem broker, with the PostgreSQL test database.

Worker starts cost seconds on a small machine, so each test checks several behaviours.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks import dispatch
from benchmarks.models import Run, RunStatus, Workload
from providers.models import Endpoint
from tests.celery_helpers import (
    FILESYSTEM_URL,
    broker,
    due_schedule,
    filesystem_options,
    probe_vantage,
    sim_endpoint,
    start_worker,
    wait_ended,
    wait_for,
    worker,
    workers,
)
from tests.fault_helpers import RedisServer, redis_server
from tokspeed.celery import app as current_app

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_broker() -> Iterator[RedisServer]:
    """A Redis server of the test's own, this process publishing to it: its queues hold only
    what this test sends."""
    with redis_server() as server, broker(server.url):
        yield server


def run_now_and_wait(endpoint: Endpoint, out: io.StringIO) -> None:
    """`manage.py run_now --wait` for the endpoint on the local vantage, its output in `out`."""
    call_command(
        "run_now",
        endpoint=[endpoint.slug],
        workload="t-f",
        vantage="local",
        wait=True,
        timeout=60,
        stdout=out,
    )


def all_runs() -> list[int]:
    return list(Run.objects.values_list("id", flat=True))


def evaluations(server: RedisServer) -> list[int]:
    """Run ids of alerts.evaluate_after_run messages waiting on the central queue."""
    found = []
    for raw in server.client().lrange("tokspeed", 0, -1):
        message = json.loads(raw)
        if message["headers"]["task"] == "alerts.evaluate_after_run":
            found.append(json.loads(base64.b64decode(message["body"]))[0][0])
    return found


def test_it_runs_scheduled_runs_on_redis_and_keeps_vantages_apart(simulator, redis_broker) -> None:
    work = Workload.objects.create(slug="t-c", name="t", concurrency=2, repetitions=2)
    good = sim_endpoint(simulator, "sim-fast+tokens=50+ttft=100")
    broken = sim_endpoint(simulator, "sim-fast+tokens=50+fault=500")
    here, there = probe_vantage("here"), probe_vantage("there")
    due_schedule(here, work, [good, broken])
    due_schedule(there, work, [good])

    with workers(
        start_worker(name="w-here", queues=[here.queue], broker_url=redis_broker.url),
        start_worker(name="w-there", queues=[there.queue], broker_url=redis_broker.url),
    ) as (w_here, w_there):
        report = dispatch.tick()
        assert len(report.enqueued) == 3
        runs = wait_ended(all_runs(), timeout=60, procs=[w_here, w_there])

        by_key = {(r.endpoint_id, r.vantage_id): r for r in runs}
        for key, hostname in [
            ((good.id, here.id), w_here.hostname),
            ((broken.id, here.id), w_here.hostname),
            ((good.id, there.id), w_there.hostname),
        ]:
            assert by_key[key].worker == hostname  # each vantage's runs stay on its queue
        for run in (by_key[(good.id, here.id)], by_key[(good.id, there.id)]):
            samples = list(run.samples.all())
            assert run.status == RunStatus.DONE and len(samples) == 4
            assert all(s.output_tokens == 50 and s.tokens_source == "usage" for s in samples)
            # The simulator's TTFT is 100 ms with a 3 % jitter; a loaded machine adds delay.
            assert all(85 <= s.ttft_ms < 1000 for s in samples)
        failed = by_key[(broken.id, here.id)]
        assert failed.status == RunStatus.FAILED and failed.error_count == 4
        assert set(failed.samples.values_list("error_category", flat=True)) == {"server_error"}

        # Redelivery of a finished run's task: the worker finds the run ended, stores nothing.
        done = by_key[(good.id, here.id)]
        current_app.send_task(dispatch.EXECUTE_RUN, args=[done.id], queue=here.queue)
        wait_for(
            lambda: f"run {done.id}: ended" in w_here.output(),
            timeout=20,
            message=lambda: w_here.output()[-2000:],
        )
        assert done.samples.count() == 4 and Run.objects.get(id=done.id).attempts == 1

        # Each run that ended asks for its evaluation once, the redelivered one too. It asks
        # once its end is committed (benchmarks/finish.py), so the test waits for the requests
        # before it stops the workers: on a loaded machine the commit that wait_ended saw can
        # come well before the request.
        ours = sorted(r.id for r in runs)

        def asked() -> list[int]:
            return sorted(evaluations(redis_broker))

        wait_for(
            lambda: asked() == ours,
            timeout=30,
            message=lambda: (
                f"evaluations asked for: {asked()} of {ours}\n"
                + w_here.output()[-1500:]
                + w_there.output()[-1500:]
            ),
        )
    assert asked() == ours  # and none more while the workers stopped


def test_it_resumes_a_run_after_its_worker_is_killed(simulator, redis_broker) -> None:
    # 4 sequential requests of ~1 s each: time to kill the worker in the middle.
    work = Workload.objects.create(slug="t-k", name="t", concurrency=1, repetitions=4)
    slow = sim_endpoint(simulator, "sim-fast+tokens=40+tps=40+ttft=50")
    probes = probe_vantage("probes")
    lease = {"TOKSPEED_RUN_LEASE_S": "1", "TOKSPEED_BROKER_VISIBILITY_TIMEOUT_S": "2"}

    with worker(
        name="w-first", queues=[probes.queue], broker_url=redis_broker.url, **lease
    ) as first:
        run = dispatch.queue_run_now(endpoint=slow, workload=work, vantage=probes)
        wait_for(
            lambda: run.samples.exists(),
            timeout=30,
            message=lambda: first.output()[-2000:],
            interval=0.05,
        )
        first.kill()
    before = {s.index: s.id for s in run.samples.all()}
    assert 1 <= len(before) < 4

    with worker(
        name="w-second", queues=[probes.queue], broker_url=redis_broker.url, **lease
    ) as second:
        [run] = wait_ended([run.id], timeout=60, procs=[second])

    samples = list(run.samples.all())
    assert [s.index for s in samples] == [0, 1, 2, 3]  # exactly repetitions × concurrency
    assert {i: s.id for i, s in enumerate(samples) if i in before} == before  # kept, not redone
    assert run.status == RunStatus.DONE and run.attempts == 2
    assert run.worker == second.hostname and run.ok_count == 4


def test_it_works_the_same_on_the_filesystem_broker(simulator, tmp_path: Path) -> None:
    work = Workload.objects.create(slug="t-f", name="t", concurrency=1, repetitions=3)
    fast = sim_endpoint(simulator, "sim-fast+tokens=20+ttft=30")
    local = probe_vantage("local")
    due_schedule(local, work, [fast])
    options = filesystem_options(tmp_path)

    with (
        broker(FILESYSTEM_URL, options),
        worker(
            name="w-fs",
            queues=[local.queue],
            broker_url=FILESYSTEM_URL,
            broker_dir=tmp_path,
        ) as fs_worker,
    ):
        dispatch.tick()
        [scheduled] = wait_ended(all_runs(), timeout=60, procs=[fs_worker])
        out = io.StringIO()
        run_now_and_wait(fast, out)
        broken = sim_endpoint(simulator, "sim-fast+tokens=20+fault=500")
        failed_out = io.StringIO()
        with pytest.raises(CommandError, match="1 of 1 run.s. failed, were skipped or had errors"):
            run_now_and_wait(broken, failed_out)

    # --wait shows samples done / expected while it waits, and says how a failed run went.
    assert "3/3 samples" in out.getvalue()
    broken_run = Run.objects.get(endpoint=broken)
    assert broken_run.status == RunStatus.FAILED
    assert (
        f"run {broken_run.id} · " in failed_out.getvalue() and "3 errors" in failed_out.getvalue()
    )
    assert scheduled.status == RunStatus.DONE and scheduled.samples.count() == 3
    assert all(s.output_tokens == 20 for s in scheduled.samples.all())
    now_run = Run.objects.exclude(id=scheduled.id).exclude(endpoint=broken).get()
    assert now_run.status == RunStatus.DONE and now_run.worker == fs_worker.hostname
    printed = out.getvalue()
    assert f"run {now_run.id} · " in printed and ": done" in printed
    assert f"TTFT p50 {now_run.ttft_p50_ms:,.0f} ms" in printed
    assert f"decode p50 {now_run.decode_tps_p50:,.1f} tok/s" in printed


def test_it_runs_five_asked_runs_of_one_endpoint_one_after_another(simulator, tmp_path) -> None:
    Workload.objects.create(slug="t-f", name="t", concurrency=1, repetitions=2)
    fast = sim_endpoint(simulator, "sim-fast+tokens=20+ttft=30")
    here = probe_vantage()
    options = filesystem_options(tmp_path)
    out = io.StringIO()
    with (
        broker(FILESYSTEM_URL, options),
        workers(  # two workers: the second must wait for the first's run, not skip its own
            *(
                start_worker(
                    name=f"w-repeat-{n}",
                    queues=[here.queue],
                    broker_url=FILESYSTEM_URL,
                    broker_dir=tmp_path,
                    TOKSPEED_RUN_BUSY_RETRY_S="1",
                )
                for n in (1, 2)
            )
        ),
    ):
        call_command(
            "run_now",
            endpoint=[fast.slug],
            workload="t-f",
            vantage=here.slug,
            repeat=5,
            wait=True,
            timeout=120,
            stdout=out,
        )

    runs = list(Run.objects.filter(endpoint=fast).order_by("id"))
    states = [(run.id, run.status, run.failure_reason) for run in runs]
    assert len(runs) == 5, f"asked for 5 runs, found {states}"
    assert all(run.status == RunStatus.DONE for run in runs), f"not all finished: {states}"
    assert out.getvalue().count(": done") == 5, out.getvalue()
    # One at a time: each run started after the one before it finished.
    ordered = sorted(runs, key=lambda run: run.started_at)
    for before, after in zip(ordered, ordered[1:], strict=False):
        assert after.started_at >= before.finished_at, f"runs {before.id} and {after.id} overlap"
