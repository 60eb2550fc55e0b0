"""The fault suite: real parts broken on purpose, and nothing lost afterwards.

Each test ends with every run done (or failed/skipped with a reason), every sample of a done
run stored once, the tick still running, and every email sent once. Marked `faults` (run with
the normal suite in CI; `-m faults` runs only these).
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from unittest import mock

import pytest
import time_machine
from django.test import override_settings
from django.utils import timezone

from benchmarks import dispatch
from benchmarks.breaker import REFUSED_PREFIX
from benchmarks.models import Pulse, Run, RunStatus, Workload
from tests import fault_helpers
from tests.celery_helpers import (
    broker,
    due_schedule,
    probe_vantage,
    sim_endpoint,
    start_worker,
    wait_ended,
    wait_for,
    workers,
)
from tests.fault_helpers import database_outage, kill_backends, redis_server
from tokspeed.celery import app as current_app

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CENTRAL = "tokspeed"


def assert_nothing_lost(runs: list[Run]) -> None:
    """Every run ended with a reason unless done; a done run has each sample exactly once."""
    for run in runs:
        run.refresh_from_db()
        assert run.status in Run.ENDED, run
        if run.status == RunStatus.DONE:
            indices = list(run.samples.order_by("index").values_list("index", flat=True))
            assert indices == list(range(run.expected_samples))
            assert run.ok_count == run.expected_samples
        else:
            assert run.failure_reason


def test_it_finishes_runs_as_done_through_a_database_outage_mid_run_and_mid_finish(
    simulator, tmp_path
) -> None:
    # 4 rounds of ~1 s; the database goes away after the first sample for longer than the
    # rest of the run, so sample writes, heartbeats and the finish all meet the outage.
    work = Workload.objects.create(slug="f-db", name="f", concurrency=2, repetitions=4)
    slow = sim_endpoint(simulator, "sim-fast+tokens=40+tps=40+ttft=50")
    probes = probe_vantage()
    with (
        redis_server() as own_redis,
        broker(own_redis.url),
        workers(start_worker(name="w-db", queues=[probes.queue], broker_url=own_redis.url)) as (
            probe,
        ),
    ):
        run = dispatch.queue_run_now(endpoint=slow, workload=work, vantage=probes)
        wait_for(
            lambda: run.samples.exists(),
            timeout=30,
            message=lambda: probe.output()[-2000:],
            interval=0.05,
        )
        with database_outage():
            time.sleep(6)  # streaming ends ~3 s in; the finish waits for the database
            assert kill_backends() == 0  # nobody got back in during the outage
        [run] = wait_ended([run.id], timeout=60, procs=[probe])
    assert run.status == RunStatus.DONE, run.failure_reason
    assert run.attempts == 1  # the same execution rode it out: no redelivery, no takeover
    assert_nothing_lost([run])
    assert "database unreachable" in probe.output()


def test_it_keeps_the_round_when_a_provider_sends_bytes_nobody_could_mean() -> None:
    # Request 1, 3: an emoji's surrogate pair split across two JSON chunks (a good answer);
    # request 2, 4: a usage block of three billion prompt tokens (that sample's error).
    from providers.models import Endpoint, Provider
    from tests.faults.test_wire_fuzz import ABSURD_USAGE, EMOJI_SPLIT

    work = Workload.objects.create(slug="f-bytes", name="f", concurrency=1, repetitions=4)
    probes = probe_vantage()
    with (
        fault_helpers.BadBytesProvider([EMOJI_SPLIT, ABSURD_USAGE]) as bad,
        redis_server() as own_redis,
        broker(own_redis.url),
        workers(start_worker(name="w-bytes", queues=[probes.queue], broker_url=own_redis.url)) as (
            probe,
        ),
    ):
        provider = Provider.objects.create(
            slug="bad", name="Bad", protocol="openai_chat", base_url=bad.base_url
        )
        endpoint = Endpoint.objects.create(provider=provider, slug="bad-m", model="m")
        run = dispatch.queue_run_now(endpoint=endpoint, workload=work, vantage=probes)
        [run] = wait_ended([run.id], timeout=60, procs=[probe])
    assert "Traceback" not in probe.output(), probe.output()[-3000:]
    assert run.status == RunStatus.PARTIAL and run.attempts == 1, run.failure_reason
    assert "2 of 4 requests failed (2 × stream_broken)" in run.failure_reason
    samples = list(run.samples.order_by("index"))
    assert [s.error_category for s in samples] == ["", "stream_broken"] * 2
    assert all(s.output_chars == len("\N{GRINNING FACE} fine") for s in samples[::2])
    assert all(s.error_message.startswith("malformed usage") for s in samples[1::2])


@override_settings(TOKSPEED_PUBLIC_DASHBOARD=True)
def test_it_keeps_every_run_after_an_admin_token_deletes_the_endpoint(simulator, client) -> None:
    from tests.api.test_api_export import read_csv
    from tests.api_factories import token_client

    work = Workload.objects.create(slug="f-del", name="f", concurrency=1, repetitions=2)
    endpoint = sim_endpoint(simulator, "sim-fast+tokens=20+ttft=20")
    probes = probe_vantage()
    with (
        redis_server() as own_redis,
        broker(own_redis.url),
        workers(start_worker(name="w-del", queues=[probes.queue], broker_url=own_redis.url)) as (
            probe,
        ),
    ):
        queued = [
            dispatch.queue_run_now(endpoint=endpoint, workload=work, vantage=probes).id
            for _ in range(2)
        ]
        runs = wait_ended(queued, timeout=60, procs=[probe])
    assert_nothing_lost(runs)
    admin = token_client(_staff())

    deleted = admin.delete(f"/api/v1/endpoints/{endpoint.slug}/")

    assert deleted.status_code == 200, deleted.content
    assert Run.objects.filter(endpoint=endpoint).count() == 2, "the DELETE erased runs"
    page = client.get(f"/endpoints/{endpoint.slug}/")
    assert page.status_code == 200 and page.context["ever_ran"], "the history page lost its runs"
    exported = read_csv(admin.get("/api/v1/export/samples.csv", {"endpoint": endpoint.slug}))
    assert len(exported) == 4, "the export lost samples of the deleted endpoint"
    assert_nothing_lost(runs)


def test_it_runs_the_next_slot_after_the_worker_of_the_last_one_is_killed(simulator) -> None:
    # The previous minute's run has its worker SIGKILLed mid-run: it stays "running" but stops
    # heartbeating. The tick queues this minute's slot of the endpoint; its run waits for the
    # dead run's lease (5 s here), inside the 90 s lateness budget, then runs: not skipped
    # as "still in flight" behind a run nobody executes.
    long = Workload.objects.create(slug="f-kill", name="f", concurrency=1, repetitions=30)
    short = Workload.objects.create(slug="f-next", name="f", concurrency=1, repetitions=1)
    slow = sim_endpoint(simulator, "sim-fast+tokens=40+tps=10+ttft=50")
    probes = probe_vantage()
    schedule = due_schedule(probes, short, [slow])
    fast_lease = {"TOKSPEED_RUN_LEASE_S": "5", "TOKSPEED_RUN_BUSY_RETRY_S": "1"}
    with redis_server() as own_redis, broker(own_redis.url):
        doomed = start_worker(
            name="w-doomed", queues=[probes.queue], broker_url=own_redis.url, **fast_lease
        )
        with workers(doomed):
            with mock.patch.object(dispatch, "claim_and_enqueue"):  # sent once it is a slot's
                dead = dispatch.queue_run_now(endpoint=slow, workload=long, vantage=probes)
            # The real tick in real worker processes runs on the machine's clock (no pin
            # reaches them): the dead run takes the minute before the one the tick will queue,
            # whatever the hour, and the assertions compare the two slots only.
            minute = timezone.now().replace(second=0, microsecond=0)
            Run.objects.filter(id=dead.id).update(
                schedule=schedule, slot=minute - timedelta(minutes=1)
            )
            dispatch.claim_and_enqueue(now=timezone.now(), run_ids=[dead.id])
            wait_for(lambda: dead.samples.exists(), timeout=30, message="no sample", interval=0.05)
            survivor = start_worker(
                name="w-next", queues=[probes.queue], broker_url=own_redis.url, **fast_lease
            )
            with workers(survivor):
                doomed.kill()  # its run's heartbeat is fresh: it was beating a second ago
                [after_id] = dispatch.tick().enqueued
                [after] = wait_ended([after_id], timeout=60, procs=[survivor])
    dead.refresh_from_db()
    assert dead.status == RunStatus.RUNNING  # nobody finished it: its worker is gone
    assert after.schedule_id == schedule.id and after.slot > dead.slot
    assert after.status == RunStatus.DONE, f"{after.status}: {after.failure_reason}"
    assert_nothing_lost([after])


def test_it_queues_the_slot_whose_tick_met_a_database_outage_once_it_is_back(simulator) -> None:
    work = Workload.objects.create(slug="f-tick", name="f", concurrency=1, repetitions=1)
    endpoint = sim_endpoint(simulator, "sim-fast+tokens=20+ttft=20")
    probes = probe_vantage()
    due_schedule(probes, work, [endpoint])
    with (
        redis_server() as own_redis,
        broker(own_redis.url),
        workers(
            start_worker(name="w-tick", queues=[CENTRAL], broker_url=own_redis.url),
            start_worker(name="w-run", queues=[probes.queue], broker_url=own_redis.url),
        ) as (central, probe),
    ):
        with database_outage():
            sent_at = timezone.now()
            current_app.send_task("benchmarks.tasks.tick", queue=CENTRAL)
            wait_for(  # the tick runs into the outage and waits it out
                lambda: "tick: database unreachable" in central.output(),
                timeout=30,
                message=lambda: "the tick never met the outage:\n" + central.output()[-3000:],
            )
            assert not Run.objects.exists()
        # Its slot, or the next one if the outage outlasted the minute.
        slot = sent_at.replace(second=0, microsecond=0)
        wait_for(
            lambda: Run.objects.filter(slot__gte=slot).exists(),
            timeout=60,
            message=lambda: central.output()[-3000:],
        )
        [run] = wait_ended(
            list(Run.objects.filter(slot__gte=slot).values_list("id", flat=True)),
            timeout=60,
            procs=[central, probe],
        )
    assert run.status == RunStatus.DONE, run.failure_reason
    assert "database unreachable" in central.output()
    assert_nothing_lost([run])


def test_it_finishes_a_stranded_run_with_every_sample_as_done_not_failed(simulator) -> None:
    # A worker died after storing every sample but before finishing (an outage beyond its
    # patience): the tick finishes the run from its samples instead of failing it.
    work = Workload.objects.create(slug="f-strand", name="f", concurrency=1, repetitions=2)
    fast = sim_endpoint(simulator, "sim-fast+tokens=20+ttft=20")
    probes = probe_vantage()
    with redis_server() as own_redis, broker(own_redis.url):
        with workers(
            start_worker(name="w-strand", queues=[probes.queue], broker_url=own_redis.url)
        ) as (probe,):
            run = dispatch.queue_run_now(endpoint=fast, workload=work, vantage=probes)
            [run] = wait_ended([run.id], timeout=30, procs=[probe])
    # Put it back as the outage left it: samples stored, still running, silent.
    silent_since = timezone.now() - timedelta(hours=1)
    Run.objects.filter(id=run.id).update(
        status=RunStatus.RUNNING, heartbeat_at=silent_since, finished_at=None, ok_count=0
    )
    report = dispatch.tick()
    run.refresh_from_db()
    assert report.stale == 1 and run.status == RunStatus.DONE and run.ok_count == 2
    assert_nothing_lost([run])


# Republish after 1 s, and never give up within the test: with the default 3 publishes, a worker
# that took over 3 s to start a run on a loaded machine saw it failed as "published 3 times".
@override_settings(TOKSPEED_RUN_REPUBLISH_S=1, TOKSPEED_RUN_MAX_PUBLISHES=1000)
def test_it_republishes_runs_a_flushed_or_restarted_broker_lost(simulator) -> None:
    work = Workload.objects.create(slug="f-redis", name="f", concurrency=1, repetitions=2)
    models = [f"sim-fast+tokens=30+tps=60+ttft={30 + i}" for i in range(3)]
    endpoints = [sim_endpoint(simulator, model) for model in models]
    probes = probe_vantage()
    due_schedule(probes, work, endpoints)
    with redis_server() as own_redis, broker(own_redis.url):
        first = dispatch.tick()
        assert len(first.enqueued) == 3
        own_redis.flush()  # the published messages are gone, as after a restart without disk
        with workers(
            start_worker(name="w-probe", queues=[probes.queue], broker_url=own_redis.url),
            start_worker(name="w-central", queues=[CENTRAL], broker_url=own_redis.url),
        ) as (probe, central):
            time.sleep(1.5)
            assert Run.objects.filter(status=RunStatus.QUEUED).count() == 3  # stranded
            again = dispatch.tick()
            # The same runs, re-sent (a minute boundary passed meanwhile may add the next slot's).
            assert set(first.enqueued) <= set(again.enqueued)
            # Restart the broker in the middle of the round: the worker reconnects, and runs
            # whose messages died with it are re-sent by a later tick.
            wait_for(
                lambda: Run.objects.filter(status=RunStatus.RUNNING).exists(),
                timeout=20,
                message=lambda: probe.output()[-2000:],
                interval=0.05,
            )
            own_redis.restart(down_s=1.0)
            deadline = time.monotonic() + 60
            while Run.objects.exclude(status__in=Run.ENDED).exists():
                assert time.monotonic() < deadline, probe.output()[-3000:]
                time.sleep(1.2)
                dispatch.tick(now=timezone.now())
            runs = list(Run.objects.all())
            # Beat's tick still goes through the restarted broker to the central worker.
            before = Pulse.objects.get(name=Pulse.TICK).seen_at
            current_app.send_task("benchmarks.tasks.tick", queue=CENTRAL)
            wait_for(
                lambda: Pulse.objects.get(name=Pulse.TICK).seen_at > before,
                timeout=30,
                message=lambda: central.output()[-2000:],
            )
    assert_nothing_lost(runs)
    scheduled = [r for r in runs if r.slot == runs[0].slot]
    not_done = [
        f"run {r.id}: {r.status}, {r.publishes} publishes, {r.attempts} attempts: "
        f"{r.failure_reason or 'no reason'}"
        for r in scheduled
        if r.status != RunStatus.DONE
    ]
    assert not not_done, "runs the broker's flush or restart lost: " + "; ".join(not_done)
    assert max(r.publishes for r in scheduled) >= 2, "no run was republished"


def test_it_keeps_a_stalled_endpoint_from_starving_the_others(simulator, client) -> None:
    work = Workload.objects.create(slug="f-stall", name="f", concurrency=1, repetitions=1)
    stalled = sim_endpoint(simulator, "sim-fast+tokens=40+tps=200+fault=stall+stall_s=30")
    models = [f"sim-fast+tokens=30+tps=200+ttft={20 + i}" for i in range(3)]
    healthy = [sim_endpoint(simulator, model) for model in models]
    probes = probe_vantage()
    limits = {"TOKSPEED_IDLE_TIMEOUT_S": "3", "TOKSPEED_BREAKER_PROBE_TIMEOUT_S": "1"}
    with (
        redis_server() as own_redis,
        broker(own_redis.url),
        workers(
            start_worker(name="w-a", queues=[probes.queue], broker_url=own_redis.url, **limits),
            start_worker(name="w-b", queues=[probes.queue], broker_url=own_redis.url, **limits),
            start_worker(name="w-central", queues=[CENTRAL], broker_url=own_redis.url),
        ) as procs,
    ):
        # Two runs of the stalled endpoint at once, and the healthy endpoints. The later-created
        # run is sent first and starts first (as a loaded machine may order them), so the
        # earlier one waits behind it: runs of an endpoint go by start, not by id.
        with mock.patch.object(dispatch, "claim_and_enqueue"):
            first = dispatch.queue_run_now(endpoint=stalled, workload=work, vantage=probes)
        second = dispatch.queue_run_now(endpoint=stalled, workload=work, vantage=probes)
        ids = [first.id, second.id]
        ids += [
            dispatch.queue_run_now(endpoint=e, workload=work, vantage=probes).id for e in healthy
        ]
        wait_for(
            lambda: Run.objects.filter(id=second.id, status=RunStatus.RUNNING).exists(),
            timeout=20,
            message="the stalled endpoint's run never started",
        )
        dispatch.claim_and_enqueue(now=timezone.now(), run_ids=[first.id])
        # While a probe worker is held by the stall, the tick runs at once on its own worker.
        sent = timezone.now()
        current_app.send_task("benchmarks.tasks.tick", queue=CENTRAL)
        wait_for(
            lambda: Pulse.objects.filter(name=Pulse.TICK, seen_at__gte=sent).exists(),
            timeout=10,
            message=lambda: procs[2].output()[-2000:],
        )
        assert Run.objects.filter(endpoint=stalled, status=RunStatus.RUNNING).exists()
        runs = wait_ended(ids, timeout=60, procs=procs)
        # Until the breaker opens (two failed-by-timeout runs), runs of it are sent; then the
        # next one is refused after one short request.
        for _ in range(3):
            refused = dispatch.queue_run_now(endpoint=stalled, workload=work, vantage=probes)
            [refused] = wait_ended([refused.id], timeout=30, procs=procs)
            runs.append(refused)
            if refused.failure_reason.startswith(REFUSED_PREFIX):
                break
    assert_nothing_lost(runs)
    of_stalled = sorted((r for r in runs if r.endpoint_id == stalled.id), key=lambda r: r.id)
    healthy_runs = [r for r in runs if r.endpoint_id != stalled.id]
    assert all(r.status == RunStatus.DONE for r in healthy_runs)
    # Never two runs of the endpoint in flight: in the order they started, each one ended
    # before the next began.
    measured = sorted(
        (r for r in of_stalled if r.started_at is not None), key=lambda r: r.started_at
    )
    spans = [
        (r.id, f"{r.started_at:%H:%M:%S.%f}", f"{r.finished_at:%H:%M:%S.%f}") for r in measured
    ]
    for a, b in zip(measured, measured[1:], strict=False):
        assert a.finished_at <= b.started_at, spans
    assert measured[0].id == second.id  # the one sent first ran first; the other waited
    assert of_stalled[-1].failure_reason.startswith(REFUSED_PREFIX)
    assert of_stalled[-1].samples.count() == 0  # no whole run spent on it
    client.force_login(_staff())
    page = client.get(f"/endpoints/{stalled.slug}/")
    assert b"Circuit breaker open" in page.content
    assert b"Circuit breaker open" not in client.get(f"/endpoints/{healthy[0].slug}/").content


def _staff():
    from django.contrib.auth.models import User

    return User.objects.create_user("ops", password="x" * 12, is_staff=True)


@pytest.mark.serial
@pytest.mark.skipif(
    os.environ.get("TOKSPEED_FAULTS_RESTART_PG") != "1",
    reason="restarts the whole PostgreSQL server: set TOKSPEED_FAULTS_RESTART_PG=1 on a "
    "machine of its own",
)
def test_it_rides_out_a_postgresql_server_restart(simulator) -> None:
    import subprocess

    work = Workload.objects.create(slug="f-pg", name="f", concurrency=1, repetitions=4)
    slow = sim_endpoint(simulator, "sim-fast+tokens=40+tps=40+ttft=50")
    probes = probe_vantage()
    with (
        redis_server() as own_redis,
        broker(own_redis.url),
        workers(start_worker(name="w-pg", queues=[probes.queue], broker_url=own_redis.url)) as (
            probe,
        ),
    ):
        run = dispatch.queue_run_now(endpoint=slow, workload=work, vantage=probes)
        wait_for(lambda: run.samples.exists(), timeout=30, message="no sample", interval=0.05)
        version = os.listdir("/etc/postgresql")[0]
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
            check=True,
        )
        from benchmarks.resilience import drop_connection

        drop_connection()
        [run] = wait_ended([run.id], timeout=90, procs=[probe])
    assert run.status == RunStatus.DONE
    assert_nothing_lost([run])


def test_it_sends_every_email_once_after_smtp_is_down_for_a_day_of_fake_time(
    client, settings
) -> None:
    from alerts.delivery import outbox
    from alerts.models import Notification
    from tests.alerts.test_alert_emails import T0, make_series, regress, send, smtp_sink

    settings.ALERTS_EPISODE_HOURS = 0  # regress() stores its slow runs an hour apart
    with time_machine.travel(T0 + timedelta(hours=30), tick=False) as clock:
        with smtp_sink() as sink:
            regress(make_series())
            regress(make_series("bolt", model="mixtral"))
            created = timezone.now()
            down = fault_helpers.free_port()  # nothing listens here: connection refused
            with override_settings(EMAIL_PORT=down):
                tries = 0
                while timezone.now() < created + timedelta(hours=26):
                    report = send()
                    assert report.failed == [] and report.sent == []
                    tries += 1
                    soonest = Notification.objects.order_by("claimed_until").first()
                    clock.move_to(soonest.claimed_until + timedelta(seconds=1))
                waiting = outbox.backlog()
                assert waiting.count == 2 and "Connection refused" in waiting.last_error
                client.force_login(_staff())
                page = client.get("/alerts/").content.decode()
                assert "2 alert emails not sent yet" in page
                health = client.get("/health/").json()
                assert "outbox" in health["failing"]
            assert 20 <= tries <= 80  # retried through the day, backoff capped at an hour
            assert send().sent and send().sent == []
    assert sorted(m["To"] for m in sink.messages) == ["oncall@team.example"] * 2
    assert Notification.objects.filter(sent_at__isnull=False).count() == 2
    assert outbox.backlog().count == 0


@pytest.mark.parametrize("path", ["/api/v1/runs/", "/"])
def test_it_answers_503_with_retry_after_while_the_database_is_down(path, settings) -> None:
    from django.db import connection
    from django.test import Client

    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    settings.TOKSPEED_RESPONSE_CACHE = False
    client = Client(raise_request_exception=False)
    connection.ensure_connection()  # the outage keeps this one, to end itself
    with database_outage():
        connection.close()  # this test's connection too: the request must open its own
        response = client.get(path)
    assert response.status_code == 503, response.content[:300]
    assert int(response["Retry-After"]) > 0
    assert b"database is unavailable" in response.content
