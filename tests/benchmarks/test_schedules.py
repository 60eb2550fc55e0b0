"""Schedules: slots, the tick's claims (race-free, no storm after downtime), stale runs, cost,
the admin and run_now. Messages go to a real filesystem broker in a temporary folder."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from benchmarks import dispatch
from benchmarks.costs import monthly_cost
from benchmarks.models import Run, RunStatus, Schedule, Vantage, Workload
from benchmarks.prompts import CHARS_PER_TOKEN, build_prompt
from benchmarks.schedules import latest_slot, slots_between
from providers.models import Endpoint, Provider
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options, queued_tasks
from tokspeed.celery import app as current_app

NOW = datetime(2026, 3, 5, 12, 0, 30, tzinfo=UTC)
LONG_AGO = NOW - timedelta(days=30)


@pytest.fixture(autouse=True)
def _only_our_schedules(request: pytest.FixtureRequest) -> None:
    """Each test ticks the schedules it makes. The default schedule that migrations create
    is switched off: its creation time is the wall clock's, so whether its slots fell due before
    NOW would depend on when the suite runs (bin/fake-clock-tests runs it before NOW too)."""
    uses_db = request.node.get_closest_marker("django_db") or "db" in request.fixturenames
    if uses_db:
        Schedule.objects.update(enabled=False)


@pytest.fixture
def fs_broker(tmp_path: Path) -> Iterator[Path]:
    """This process publishes to a filesystem broker in a temporary folder (yielded)."""
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):
        yield tmp_path


def make_endpoints(count: int, *, prefix: str = "ep", **fields) -> list[Endpoint]:
    provider = Provider.objects.create(
        slug=f"{prefix}-prov",
        name=f"{prefix} provider",
        protocol="openai_chat",
        base_url="http://127.0.0.1:9/v1",
    )
    made = [
        Endpoint.objects.create(provider=provider, slug=f"{prefix}-{i}", model=f"m{i}", **fields)
        for i in range(count)
    ]
    Endpoint.objects.filter(id__in=[e.id for e in made]).update(created_at=LONG_AGO)
    return list(Endpoint.objects.filter(id__in=[e.id for e in made]))


def make_schedule(*, workloads: list[Workload], queue: str = "probes", **timing) -> Schedule:
    vantage, _ = Vantage.objects.get_or_create(
        slug=queue, defaults={"label": queue, "queue": queue}
    )
    schedule = Schedule.objects.create(name="s", vantage=vantage, **timing)
    schedule.workloads.set(workloads)
    Schedule.objects.filter(id=schedule.id).update(created_at=LONG_AGO)
    schedule.refresh_from_db()
    return schedule


def workload(slug: str, **fields) -> Workload:
    return Workload.objects.update_or_create(slug=slug, defaults={"name": slug, **fields})[0]


def test_it_computes_slots_in_utc() -> None:
    times = Schedule(times_of_day=["18:00", "02:00", "10:00"])
    start = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
    assert slots_between(times, start, start + timedelta(days=1)) == [
        datetime(2026, 3, 4, 18, 0, tzinfo=UTC),
        datetime(2026, 3, 5, 2, 0, tzinfo=UTC),
        datetime(2026, 3, 5, 10, 0, tzinfo=UTC),
    ]
    assert latest_slot(times, NOW) == datetime(2026, 3, 5, 10, 0, tzinfo=UTC)
    every_20 = Schedule(interval_minutes=20)
    assert latest_slot(every_20, NOW) == datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
    assert len(slots_between(every_20, NOW - timedelta(hours=2), NOW)) == 6


def test_a_schedule_in_local_time_keeps_its_local_hours_across_daylight_saving() -> None:
    # New York's 2027 spring change: 02:00 EST becomes 03:00 EDT on Sunday March 14.
    local = Schedule(times_of_day=["09:00", "02:30"], time_zone="America/New_York")
    start = datetime(2027, 3, 13, 0, 0, tzinfo=UTC)
    assert slots_between(local, start, start + timedelta(days=3)) == [
        datetime(2027, 3, 13, 7, 30, tzinfo=UTC),  # 02:30 EST
        datetime(2027, 3, 13, 14, 0, tzinfo=UTC),  # 09:00 EST
        datetime(2027, 3, 14, 7, 30, tzinfo=UTC),  # 02:30 skipped by the change: 03:30 EDT
        datetime(2027, 3, 14, 13, 0, tzinfo=UTC),  # 09:00 EDT
        datetime(2027, 3, 15, 6, 30, tzinfo=UTC),  # 02:30 EDT
        datetime(2027, 3, 15, 13, 0, tzinfo=UTC),
    ]
    # The autumn change repeats 01:00–02:00 (November 7 2027): 01:30 runs once, the first.
    autumn = Schedule(times_of_day=["01:30"], time_zone="America/New_York")
    start = datetime(2027, 11, 6, 12, 0, tzinfo=UTC)
    assert slots_between(autumn, start, start + timedelta(days=2)) == [
        datetime(2027, 11, 7, 5, 30, tzinfo=UTC),  # 01:30 EDT
        datetime(2027, 11, 8, 6, 30, tzinfo=UTC),  # 01:30 EST
    ]
    # A daily schedule's latest slot a moment before its time, on the day after a 25-hour day.
    daily = Schedule(times_of_day=["09:00"], time_zone="America/New_York")
    assert latest_slot(daily, datetime(2027, 11, 8, 13, 59, tzinfo=UTC)) == datetime(
        2027, 11, 7, 14, 0, tzinfo=UTC
    )
    # The same times with no zone are UTC, as before.
    utc = Schedule(times_of_day=["09:00"])
    assert slots_between(utc, start, start + timedelta(days=1)) == [
        datetime(2027, 11, 7, 9, 0, tzinfo=UTC)
    ]


@pytest.mark.django_db
def test_the_tick_queues_a_local_time_schedule_at_its_local_hour(
    fs_broker: Path, django_capture_on_commit_callbacks
) -> None:
    base = workload("t-base")
    [endpoint] = make_endpoints(1)
    # 09:00 in Berlin's winter is 08:00 UTC
    make_schedule(workloads=[base], times_of_day=["09:00"], time_zone="Europe/Berlin")
    with django_capture_on_commit_callbacks(execute=True):
        report = dispatch.tick(now=NOW)
    [run] = Run.objects.filter(endpoint=endpoint)
    assert run.slot == datetime(2026, 3, 5, 8, 0, tzinfo=UTC)
    assert report.enqueued == [run.id]


@pytest.mark.django_db
def test_it_runs_only_the_latest_missed_slot_after_downtime(
    fs_broker: Path, django_capture_on_commit_callbacks
) -> None:
    base = workload("t-base", repetitions=3)
    [endpoint] = make_endpoints(1)
    schedule = make_schedule(workloads=[base], times_of_day=["02:00", "10:00", "18:00"])
    last_done = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)  # the last slot that ran before downtime
    Run.objects.create(
        endpoint=endpoint, workload=base, vantage=schedule.vantage, slot=last_done, status="done"
    )

    with django_capture_on_commit_callbacks(execute=True):
        report = dispatch.tick(now=NOW)

    runs = {run.slot: run for run in Run.objects.exclude(slot=last_done)}
    due = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)
    assert runs[due].status == RunStatus.QUEUED and runs[due].repetitions == 3
    missed = [datetime(2026, 3, 4, 18, 0, tzinfo=UTC), datetime(2026, 3, 5, 2, 0, tzinfo=UTC)]
    assert sorted(s for s, r in runs.items() if r.status == RunStatus.SKIPPED) == missed
    assert report.enqueued == [runs[due].id]
    assert queued_tasks(fs_broker) == [
        {"queue": "probes", "task": "benchmarks.tasks.execute_run", "args": [runs[due].id]}
    ]

    with django_capture_on_commit_callbacks(execute=True):
        again = dispatch.tick(now=NOW + timedelta(minutes=1))
    assert again.enqueued == [] and Run.objects.count() == 4
    assert len(queued_tasks(fs_broker)) == 1


@pytest.mark.django_db
def test_it_covers_every_enabled_endpoint_when_none_is_chosen(
    fs_broker: Path, django_capture_on_commit_callbacks
) -> None:
    endpoints = make_endpoints(3)
    Endpoint.objects.filter(id=endpoints[2].id).update(enabled=False)
    base, long = workload("t-base"), workload("t-long", context_tokens=30_000)
    make_schedule(workloads=[base, long], interval_minutes=60)
    new_endpoint = Endpoint.objects.create(
        provider=endpoints[0].provider, slug="brand-new", model="new"
    )  # created now: its first slot is the next one, never a past one

    with django_capture_on_commit_callbacks(execute=True):
        dispatch.tick(now=timezone.now())

    pairs = set(Run.objects.values_list("endpoint__slug", "workload__slug"))
    assert pairs == {(e.slug, w) for e in endpoints[:2] for w in ("t-base", "t-long")}
    assert new_endpoint.slug not in {e for e, _ in pairs}
    assert len(queued_tasks(fs_broker)) == 4


@pytest.mark.django_db(transaction=True)
def test_it_claims_each_run_once_when_two_ticks_race(fs_broker: Path) -> None:
    endpoints = make_endpoints(40)
    make_schedule(workloads=[workload("t-a"), workload("t-b")], interval_minutes=15)
    start = threading.Barrier(2)
    reports = []

    def tick() -> None:
        start.wait()
        try:
            reports.append(dispatch.tick(now=NOW))
        finally:
            connection.close()  # this thread's own connection

    threads = [threading.Thread(target=tick) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    run_ids = set(Run.objects.values_list("id", flat=True))
    assert len(run_ids) == len(endpoints) * 2
    sent = [task["args"][0] for task in queued_tasks(fs_broker)]
    assert sorted(sent) == sorted(run_ids)  # every run exactly once
    first, second = (set(r.enqueued) for r in reports)
    assert not first & second and first | second == run_ids


@pytest.mark.django_db
@override_settings(TOKSPEED_RUN_STALE_S=600, TOKSPEED_RUN_QUEUED_TIMEOUT_S=3600)
def test_it_fails_silent_runs_and_skips_forgotten_ones(
    fs_broker: Path, django_capture_on_commit_callbacks
) -> None:
    [endpoint] = make_endpoints(1)
    base = workload("t-base")
    vantage = Vantage.objects.create(slug="far", label="Far", queue="far")
    now = timezone.now()

    def run(slot_minutes: int, **fields) -> Run:
        slot = now - timedelta(minutes=slot_minutes)
        return Run.objects.create(
            endpoint=endpoint, workload=base, vantage=vantage, slot=slot, **fields
        )

    silent = run(30, status="running", heartbeat_at=now - timedelta(minutes=11), attempts=1)
    alive = run(20, status="running", heartbeat_at=now - timedelta(minutes=2), attempts=1)
    forgotten = run(90, status="queued", enqueued_at=now - timedelta(minutes=61))
    waiting = run(10, status="queued", enqueued_at=now - timedelta(minutes=5))

    with django_capture_on_commit_callbacks(execute=True):
        report = dispatch.tick(now=now)

    for item in (silent, alive, forgotten, waiting):
        item.refresh_from_db()
    assert report.stale == 2
    assert silent.status == RunStatus.FAILED and "No progress for 10 min" in silent.failure_reason
    assert forgotten.status == RunStatus.SKIPPED and "queue 'far'" in forgotten.failure_reason
    assert alive.status == RunStatus.RUNNING and waiting.status == RunStatus.QUEUED
    evaluations = [t for t in queued_tasks(fs_broker) if t["task"] == "alerts.evaluate_after_run"]
    assert evaluations == [
        {"queue": "tokspeed", "task": "alerts.evaluate_after_run", "args": [silent.id]}
    ]


@pytest.mark.django_db
def test_it_prices_a_schedule_per_month() -> None:
    priced = make_endpoints(
        2, prefix="paid", price_input_per_mtok=Decimal("3"), price_output_per_mtok=Decimal("15")
    )
    make_endpoints(1, prefix="free")
    base = workload("t-base", repetitions=5, concurrency=1, max_output_tokens=2048)
    wide = workload("t-wide", repetitions=2, concurrency=3, max_output_tokens=1000)
    schedule = make_schedule(workloads=[base, wide], times_of_day=["02:00", "10:00", "18:00"])

    cost = monthly_cost(schedule)

    slots = 3 * 30
    tokens_in = -(-len(build_prompt(prompt=base.prompt)) // CHARS_PER_TOKEN)
    per_endpoint = 5 * (tokens_in * 3 + 2048 * 15) + 2 * 3 * (tokens_in * 3 + 1000 * 15)
    expected = Decimal(slots * len(priced) * per_endpoint) / 1_000_000
    assert cost.usd == expected.quantize(Decimal("0.01"))
    assert cost.requests == slots * 3 * (5 + 2 * 3)
    assert cost.unpriced == ["m0 @ free provider"]
    assert str(cost).startswith(f"${cost.usd:,.2f} / month")


@pytest.mark.django_db
def test_it_edits_schedules_in_the_admin_with_their_cost(admin_client) -> None:
    make_endpoints(1, price_input_per_mtok=Decimal("1"), price_output_per_mtok=Decimal("2"))
    base = workload("t-base")
    vantage = Vantage.objects.create(slug="office", label="Office", queue="office")
    form = {
        "name": "Twice a day",
        "enabled": "on",
        "times_of_day": "18:00, 06:30",
        "workloads": [base.id],
        "vantage": vantage.id,
    }
    response = admin_client.post("/admin/benchmarks/schedule/add/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    schedule = Schedule.objects.get(name="Twice a day")
    assert schedule.times_of_day == ["06:30", "18:00"]

    page = admin_client.get("/admin/benchmarks/schedule/").content.decode()
    assert str(monthly_cost(schedule)).split(" for ")[0] in page

    bad = admin_client.post("/admin/benchmarks/schedule/add/", form | {"times_of_day": "25:00"})
    assert bad.status_code == 200 and "hours 00–23" in bad.content.decode()
    both = admin_client.post("/admin/benchmarks/schedule/add/", form | {"interval_minutes": "30"})
    assert "not both" in both.content.decode()

    local = form | {"name": "Berlin mornings", "time_zone": "Europe/Berlin"}
    assert admin_client.post("/admin/benchmarks/schedule/add/", local).status_code == 302
    assert Schedule.objects.get(name="Berlin mornings").time_zone == "Europe/Berlin"
    page = admin_client.get("/admin/benchmarks/schedule/").content.decode()
    assert "06:30, 18:00 Europe/Berlin" in page and "06:30, 18:00 UTC" in page
    nowhere = admin_client.post(
        "/admin/benchmarks/schedule/add/", local | {"time_zone": "Mars/Base"}
    )
    assert nowhere.status_code == 200 and "is not a time zone" in nowhere.content.decode()


@pytest.mark.django_db
def test_it_shows_runs_read_only_in_the_admin(admin_client) -> None:
    [endpoint] = make_endpoints(1)
    vantage = Vantage.objects.create(slug="office", label="Office", queue="office")
    run = Run.objects.create(
        endpoint=endpoint, workload=workload("t-base"), vantage=vantage, slot=NOW, status="done"
    )
    assert admin_client.get("/admin/benchmarks/run/add/").status_code == 403
    page = admin_client.get(f"/admin/benchmarks/run/{run.id}/change/").content.decode()
    assert "m0 @ ep provider" in page and 'name="_save"' not in page


@pytest.mark.django_db
def test_it_queues_a_run_now_on_the_vantage_queue(
    fs_broker: Path, django_capture_on_commit_callbacks
) -> None:
    endpoints = make_endpoints(2)
    workload("t-base", repetitions=4)
    Vantage.objects.create(slug="office", label="Office", queue="office-q")
    before = timezone.now()

    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "run_now",
            endpoint=[endpoints[1].slug],
            workload="t-base",
            vantage="office",
            repetitions=2,
        )

    run = Run.objects.get()
    assert run.endpoint == endpoints[1] and run.repetitions == 2 and run.slot >= before
    assert queued_tasks(fs_broker) == [
        {"queue": "office-q", "task": "benchmarks.tasks.execute_run", "args": [run.id]}
    ]
    with pytest.raises(CommandError, match="No endpoint with slug: nope"):
        call_command("run_now", endpoint=["nope"], workload="t-base")
    with pytest.raises(CommandError, match="No workload 'nope'"):
        call_command("run_now", workload="nope")


@pytest.mark.django_db
def test_it_runs_a_schedule_now_from_the_admin(
    admin_client, fs_broker: Path, django_capture_on_commit_callbacks
) -> None:
    endpoints = make_endpoints(2)
    schedule = make_schedule(workloads=[workload("t-a"), workload("t-b")], interval_minutes=30)

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/benchmarks/schedule/",
            {"action": "run_now", "_selected_action": [schedule.id]},
            follow=True,
        )

    assert "4 runs queued." in response.content.decode()
    runs = Run.objects.all()
    assert {(r.endpoint_id, r.workload.slug) for r in runs} == {
        (e.id, w) for e in endpoints for w in ("t-a", "t-b")
    }
    assert sorted(t["args"][0] for t in queued_tasks(fs_broker)) == sorted(r.id for r in runs)


@pytest.mark.django_db
def test_it_retries_enqueueing_when_the_broker_was_down(
    fs_broker: Path, django_capture_on_commit_callbacks
) -> None:
    make_endpoints(2)
    make_schedule(workloads=[workload("t-base")], interval_minutes=60)
    conf = current_app.conf
    saved = conf.task_publish_retry_policy
    conf.task_publish_retry_policy = {"max_retries": 0}  # fail at once, not after retries
    try:
        with (
            broker("redis://127.0.0.1:1/0"),  # nothing listens on port 1
            django_capture_on_commit_callbacks(execute=True),
        ):
            dispatch.tick(now=NOW)
    finally:
        conf.task_publish_retry_policy = saved
    assert Run.objects.filter(enqueued_at=None).count() == 2  # claims released

    with django_capture_on_commit_callbacks(execute=True):
        report = dispatch.tick(now=NOW + timedelta(minutes=1))
    assert len(report.enqueued) == 2 and len(queued_tasks(fs_broker)) == 2


@pytest.mark.django_db
def test_it_catches_up_a_missed_minute_within_the_lateness_budget_and_says_so(
    fs_broker: Path, django_capture_on_commit_callbacks
) -> None:
    base = workload("t-late", repetitions=1)
    [endpoint] = make_endpoints(1)
    schedule = make_schedule(workloads=[base], interval_minutes=1)
    ran = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
    Run.objects.create(
        endpoint=endpoint, workload=base, vantage=schedule.vantage, slot=ran, status="done"
    )
    # The 12:01 tick met a database outage; the 12:02 tick comes 10 s late.
    with django_capture_on_commit_callbacks(execute=True):
        report = dispatch.tick(now=ran + timedelta(minutes=2, seconds=10))

    caught_up = Run.objects.get(slot=ran + timedelta(minutes=1))
    assert caught_up.status == RunStatus.QUEUED, caught_up.failure_reason
    assert caught_up.note.startswith("Queued 70 s after its slot"), caught_up.note
    on_time = Run.objects.get(slot=ran + timedelta(minutes=2))
    assert on_time.status == RunStatus.QUEUED and on_time.note == ""
    assert sorted(report.enqueued) == sorted([caught_up.id, on_time.id])

    # Beat and the database come back only at 12:04:40: 12:03 is past its 90 s budget.
    with django_capture_on_commit_callbacks(execute=True):
        dispatch.tick(now=ran + timedelta(minutes=4, seconds=40))
    missed = Run.objects.get(slot=ran + timedelta(minutes=3))
    assert missed.status == RunStatus.SKIPPED
    assert "lateness budget of 90 s" in missed.failure_reason
    assert Run.objects.get(slot=ran + timedelta(minutes=4)).status == RunStatus.QUEUED
