"""Executing runs in this process against the real simulator, with a real PostgreSQL.

Samples are written by the runner's writer thread on its own connection, so these tests use
committed data (transactional_db).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from statistics import median

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from benchmarks import runner
from benchmarks.measure import Measurement
from benchmarks.models import Run, RunStatus, Sample, Vantage, Workload
from benchmarks.sample_writer import SampleWriter
from providers.config import endpoint_config
from providers.models import Endpoint, Provider
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options, queued_tasks

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fs_broker(tmp_path: Path) -> Iterator[Path]:
    """This process publishes to a filesystem broker in a temporary folder (yielded)."""
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):
        yield tmp_path


def make_run(
    simulator, model: str, *, concurrency: int = 1, repetitions: int = 2, key_env: str = "", **run
) -> Run:
    provider, _ = Provider.objects.get_or_create(
        slug=f"sim-{key_env or 'open'}",
        defaults={
            "name": "Sim",
            "protocol": "openai_chat",
            "base_url": simulator.openai_base,
            "api_key_env": key_env,
            "simulated": True,
        },
    )
    endpoint = Endpoint.objects.create(
        provider=provider, slug=f"e-{Endpoint.objects.count()}", model=model
    )
    workload, _ = Workload.objects.get_or_create(
        slug="t-run", defaults={"name": "t", "max_output_tokens": 500}
    )
    vantage, _ = Vantage.objects.get_or_create(slug="here", defaults={"label": "h", "queue": "h"})
    return Run.objects.create(
        endpoint=endpoint,
        workload=workload,
        vantage=vantage,
        slot=timezone.now(),
        concurrency=concurrency,
        repetitions=repetitions,
        **run,
    )


def spy_request_ids(monkeypatch) -> dict[int, str]:
    """Sample index → the simulator's request id, as handed to the writer."""
    seen: dict[int, str] = {}
    put = SampleWriter.put

    def recording(self, index, measurement):
        seen[index] = measurement.request_id
        put(self, index, measurement)

    monkeypatch.setattr(SampleWriter, "put", recording)
    return seen


def test_it_stores_what_the_simulator_sent_and_a_summary(simulator, fs_broker, monkeypatch) -> None:
    run = make_run(simulator, "sim-fast+tokens=60+ttft=80", concurrency=2, repetitions=2)
    request_ids = spy_request_ids(monkeypatch)

    assert runner.execute(run.id, worker="test@here") == RunStatus.DONE

    run.refresh_from_db()
    samples = list(run.samples.all())
    assert [s.index for s in samples] == [0, 1, 2, 3]
    for sample in samples:
        truth = simulator.truth(request_ids[sample.index])
        assert sample.ok and sample.output_tokens == truth["output_tokens"] == 60
        assert sample.tokens_source == "usage"
        # Offsets from the headers cancel t0: client and server agree (loose: a busy machine).
        sent_ms = (truth["first_token_ns"] - truth["headers_ns"]) / 1e6
        assert sample.ttft_ms - sample.ttfb_ms == pytest.approx(sent_ms, abs=50)
        assert sample.ttft_ms >= 80 * 0.85  # the asked 80 ms, less the simulator's 3 % jitter
    assert run.status == RunStatus.DONE and run.failure_reason == ""
    assert (run.ok_count, run.error_count, run.attempts) == (4, 0, 1)
    assert run.ttft_p50_ms == pytest.approx(median(s.ttft_ms for s in samples))
    assert run.decode_tps_p50 == pytest.approx(median(s.decode_tps for s in samples))
    assert run.output_tokens_p50 == 60 and run.summary["ttft_ms"]["n"] == 4
    # Aggregate: all ok tokens over the time the two rounds of two streams were in flight.
    walls = []
    for first in (0, 2):
        pair = samples[first : first + 2]
        start = min(s.started_at for s in pair)
        end = max(s.started_at + timedelta(milliseconds=s.total_ms) for s in pair)
        walls.append((end - start).total_seconds())
    assert run.throughput_tps == pytest.approx(4 * 60 / sum(walls), rel=1e-3)
    assert run.input_tokens == samples[0].input_tokens and run.client_version.startswith("tokspeed")
    assert run.worker == "test@here" and run.finished_at >= run.started_at
    # The run's end asks, by task name, for its alert evaluation and its advisor digest.
    assert sorted(queued_tasks(fs_broker), key=lambda task: task["task"]) == [
        {"queue": "tokspeed", "task": "advisor.digest_run", "args": [run.id]},
        {"queue": "tokspeed", "task": "alerts.evaluate_after_run", "args": [run.id]},
    ]


def test_it_resumes_with_only_the_samples_it_lacks(simulator, fs_broker, monkeypatch) -> None:
    long_ago = timezone.now() - timedelta(hours=1)
    run = make_run(
        simulator,
        "sim-fast+tokens=30",
        concurrency=2,
        repetitions=2,
        status=RunStatus.RUNNING,
        heartbeat_at=long_ago,
        started_at=long_ago,
        attempts=1,
    )
    # The lost worker stored index 0 and 2 (one of each round) before it died.
    kept = [
        Sample.objects.create(
            run=run, slot=run.slot, index=i, started_at=long_ago, ttft_ms=1234.0, total_ms=2e3
        )
        for i in (0, 2)
    ]
    request_ids = spy_request_ids(monkeypatch)

    assert runner.execute(run.id) == RunStatus.DONE

    samples = {s.index: s for s in run.samples.all()}
    assert sorted(samples) == [0, 1, 2, 3]
    assert [(samples[k.index].id, samples[k.index].ttft_ms) for k in kept] == [
        (k.id, 1234.0) for k in kept
    ]
    assert sorted(request_ids) == [1, 3]  # each round re-sent at full width, only 1 and 3 kept
    run.refresh_from_db()
    assert run.attempts == 2 and run.ok_count == 4 and run.started_at == long_ago


def test_it_fails_a_run_whose_key_is_not_set(simulator, fs_broker, monkeypatch) -> None:
    monkeypatch.delenv("TOKSPEED_TEST_UNSET_KEY", raising=False)
    run = make_run(simulator, "sim-fast", key_env="TOKSPEED_TEST_UNSET_KEY")

    assert runner.execute(run.id) == RunStatus.FAILED

    run.refresh_from_db()
    assert "TOKSPEED_TEST_UNSET_KEY is not set" in run.failure_reason
    assert run.samples.count() == 0 and run.finished_at is not None
    assert runner.execute(run.id) == runner.ALREADY_ENDED  # a redelivery does nothing


@pytest.mark.parametrize(
    ("fault", "category"),
    [("429", "rate_limited"), ("500", "server_error"), ("drop", "stream_broken")],
)
def test_it_stores_provider_errors_as_samples(simulator, fs_broker, fault, category) -> None:
    run = make_run(simulator, f"sim-fast+tokens=40+fault={fault}", repetitions=2)

    assert runner.execute(run.id) == RunStatus.FAILED

    run.refresh_from_db()
    assert [s.error_category for s in run.samples.all()] == [category, category]
    assert run.summary["errors_by_category"] == {category: 2} and run.ok_count == 0
    assert run.failure_reason == f"All 2 requests failed (2 × {category})."
    assert run.ttft_p50_ms is None  # errors never enter speed statistics


def test_it_marks_a_run_with_some_errors_partial(simulator, fs_broker) -> None:
    run = make_run(
        simulator, "sim-fast+tokens=20", repetitions=3, status=RunStatus.RUNNING, attempts=1
    )
    Sample.objects.create(
        run=run,
        slot=run.slot,
        index=0,
        started_at=timezone.now(),
        error_category="overloaded",
        http_status=529,
    )

    assert runner.execute(run.id) == RunStatus.PARTIAL

    run.refresh_from_db()
    assert (run.ok_count, run.error_count) == (2, 1)
    assert run.failure_reason == "1 of 3 requests failed (1 × overloaded)."


def test_it_leaves_a_run_to_the_worker_holding_a_fresh_lease(simulator, fs_broker) -> None:
    run = make_run(
        simulator, "sim-fast", status=RunStatus.RUNNING, heartbeat_at=timezone.now(), attempts=1
    )
    assert runner.execute(run.id) == runner.BUSY
    run.refresh_from_db()
    assert run.attempts == 1 and run.samples.count() == 0
    assert runner.execute(10**9) == runner.MISSING


@override_settings(TOKSPEED_RUN_LEASE_S=1)
def test_it_stops_when_another_worker_took_the_run_over(simulator, fs_broker) -> None:
    run = make_run(simulator, "sim-fast+tokens=20+ttft=400", repetitions=4)
    assert runner.claim_run(run.id, worker="old").outcome == "claimed"
    Run.objects.filter(id=run.id).update(attempts=2)  # a newer attempt owns it now
    run.refresh_from_db()

    with pytest.raises(runner.LeaseLost):
        runner.measure_missing(run, endpoint_config(run.endpoint), attempt=1)

    assert run.samples.count() < 4  # it stopped early instead of finishing the run
    assert Run.objects.get(id=run.id).status == RunStatus.RUNNING  # left to the new owner


def test_it_ends_a_run_stopped_by_the_time_limit(simulator, fs_broker, monkeypatch) -> None:
    run = make_run(simulator, "sim-fast", repetitions=3)

    def too_slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(runner, "measure_missing", too_slow)
    assert runner.execute(run.id) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.failure_reason == "Stopped by the task time limit with 0 of 3 samples."


@override_settings(TOKSPEED_RUN_MAX_ATTEMPTS=3)
def test_it_gives_up_on_a_run_whose_worker_keeps_dying(simulator, fs_broker) -> None:
    silent = timezone.now() - timedelta(hours=1)
    run = make_run(simulator, "sim-fast", status=RunStatus.RUNNING, heartbeat_at=silent, attempts=3)
    assert runner.execute(run.id) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.attempts == 4 and run.samples.count() == 0
    assert run.failure_reason == "Started 4 times without finishing: its worker keeps being lost."


@override_settings(TOKSPEED_RUN_LEASE_S=1, TOKSPEED_IDLE_TIMEOUT_S=10)
def test_it_holds_the_endpoint_while_a_stalled_stream_outlasts_the_lease(simulator, fs_broker):
    # The stream goes silent for 4 s, four leases: the writer thread keeps beating while the
    # event loop waits on the stall, so the run still holds its endpoint and another run of it
    # waits instead of starting beside it.
    stalled = make_run(simulator, "sim-fast+tokens=20+fault=stall+stall_s=4", repetitions=1)
    other = Run.objects.create(
        endpoint=stalled.endpoint,
        workload=stalled.workload,
        vantage=stalled.vantage,
        slot=stalled.slot + timedelta(minutes=1),  # the endpoint's next slot
        concurrency=1,
        repetitions=1,
    )
    outcome: list[str] = []

    def work() -> None:
        try:
            outcome.append(runner.execute(stalled.id))
        finally:
            connection.close()  # this thread's own

    worker = threading.Thread(target=work)
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while not Run.objects.filter(id=stalled.id, status=RunStatus.RUNNING).exists():
            assert time.monotonic() < deadline and worker.is_alive(), outcome
            time.sleep(0.05)
        time.sleep(2.5)  # more than twice the lease, inside the stall
        assert runner.claim_run(other.id, worker="other").outcome == runner.WAIT
        assert Run.objects.get(id=other.id).status == RunStatus.QUEUED
    finally:
        worker.join(timeout=30)
    assert outcome == [RunStatus.DONE]
    assert runner.claim_run(other.id, worker="other").outcome == "claimed"


def test_it_fails_a_run_an_unexpected_error_stopped_with_what_happened(
    simulator, fs_broker, monkeypatch
) -> None:
    run = make_run(simulator, "sim-fast", repetitions=3)

    def broken(*args, **kwargs):
        raise ValueError("a bug in tokspeed")

    monkeypatch.setattr(runner, "measure_missing", broken)
    assert runner.execute(run.id) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.failure_reason == (
        "Stopped by an error in tokspeed (ValueError) with 0 of 3 samples stored."
    )


def test_it_stores_a_value_postgresql_refuses_as_that_samples_malformed_error(simulator) -> None:
    # A count past the bounds' reach (they are checked in the recorder; this one came around
    # them): the database refuses it, the sample is kept as an error, the others as they are.
    run = make_run(simulator, "sim-fast", repetitions=2)
    at = run.slot
    absurd = Measurement(started_at=at, t0_ns=0, ttft_ms=5.0, input_tokens=2**40)
    fine = Measurement(started_at=at, t0_ns=0, ttft_ms=5.0, input_tokens=7, output_tokens=3)
    with SampleWriter(run_id=run.id, slot=run.slot, attempt=0, heartbeat_s=30) as writer:
        writer.put(0, absurd)
        writer.put(1, fine)
    refused, kept = run.samples.order_by("index")
    assert refused.error_category == "stream_broken"
    assert refused.error_message.startswith("malformed value from the provider: ")
    assert refused.started_at == at and refused.input_tokens is None
    assert (kept.error_category, kept.input_tokens, kept.output_tokens) == ("", 7, 3)
