"""Confirmation runs end to end: real Celery workers, the simulator, the tick's claims.

Two endpoints of one simulated model share eighteen days of stored history (seeded in the database
around what each measured in one real run), then the simulator's decode slows by 12 %. Endpoint
A is on a schedule, so its suspect verdicts queue confirmation runs; endpoint B runs at the same
slots but no schedule runs it, so it gets none: the same history without them. Every run after
the step is measured and evaluated by a worker; the test only ticks (tick(now=…): the
schedule's runs and the confirmation runs due are claimed and enqueued as in production).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from alerts.models import Alert, Evaluation
from alerts.testing import daily_slots, store_history
from benchmarks.dispatch import tick
from benchmarks.models import Run, RunOrigin, Schedule, Workload
from tests.celery_helpers import (
    FILESYSTEM_URL,
    LONG_AGO,
    broker,
    filesystem_options,
    probe_vantage,
    sim_endpoint,
    wait_for,
    worker,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("real_episodes"),
]

# One model, written two ways (an endpoint is one model per provider)
MODELS = ("sim-fast+tps=200+ttft=100+tokens=40", "sim-fast+tokens=40+ttft=100+tps=200")
T0 = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)  # the last baseline slot
HORIZON = T0 + timedelta(hours=40)


@pytest.fixture
def fs_broker(tmp_path: Path) -> Iterator[Path]:
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):
        yield tmp_path


def measured(ids: list[int], alerts_worker) -> None:
    """Wait until the runs `ids` ended and were evaluated by the worker."""
    wait_for(
        lambda: Evaluation.objects.filter(run_id__in=ids).count() == len(ids),
        timeout=90,
        message=lambda: f"runs {ids} not evaluated\n" + alerts_worker.output()[-4000:],
    )


def opened_at(endpoint) -> datetime | None:
    """The slot of the run whose evaluation opened the endpoint's decode alert."""
    alert = Alert.objects.filter(endpoint=endpoint, metric="decode_tps").first()
    if alert is None:
        return None
    return alert.events.order_by("id").first().evaluation.run.slot


def test_it_alerts_sooner_on_a_12_percent_step_with_confirmation_runs(sim_control, fs_broker):
    Schedule.objects.all().delete()  # the default schedule: only A's runs on one here
    vantage = probe_vantage()
    workload = Workload.objects.create(slug="w", name="Standard prompt", max_output_tokens=200)
    a, b = (sim_endpoint(sim_control, model) for model in MODELS)
    schedule = Schedule.objects.create(
        name="3 a day", vantage=vantage, times_of_day=["02:00", "10:00", "18:00"]
    )
    schedule.workloads.set([workload])
    schedule.endpoints.set([a])
    Schedule.objects.filter(id=schedule.id).update(created_at=LONG_AGO)
    with worker(
        name="w-confirm",
        queues=[vantage.queue, "tokspeed"],
        broker_url=FILESYSTEM_URL,
        broker_dir=fs_broker,
        DJANGO_SETTINGS_MODULE="tokspeed.test_settings",
    ) as alerts_worker:
        # One real run of each at T0 says what the simulator measures; the history before it is
        # stored around that (5 % noise a request).
        first = [
            Run.objects.create(endpoint=e, workload=workload, vantage=vantage, slot=T0)
            for e in (a, b)
        ]
        tick(now=T0)
        measured([r.id for r in first], alerts_worker)
        for run in Run.objects.filter(id__in=[r.id for r in first]):
            store_history(
                endpoint=run.endpoint, workload=workload, vantage=vantage,
                slots=daily_slots(end=T0 - timedelta(hours=1), days=18),
                decode=lambda s, run=run: run.decode_tps_p50,
                ttft=lambda s, run=run: run.ttft_p50_ms, client_version=run.client_version,
            )  # fmt: skip

        sim_control.control(speed_factor=0.88)  # decode 12 % slower from here on
        slots = [T0 + timedelta(hours=h) for h in range(8, 41, 8)]
        now = T0
        while now < HORIZON and not (opened_at(a) and opened_at(b)):
            waiting = Run.objects.filter(endpoint=a, origin=RunOrigin.CONFIRMATION, slot__gt=now)
            confirmation = waiting.order_by("slot").values_list("slot", flat=True).first()
            now = min([s for s in slots if s > now] + [confirmation or HORIZON])
            if now in slots:  # B runs at A's scheduled slots, outside any schedule
                Run.objects.create(endpoint=b, workload=workload, vantage=vantage, slot=now)
            measured(tick(now=now).enqueued, alerts_worker)

    confirmations = list(Run.objects.filter(origin=RunOrigin.CONFIRMATION).order_by("slot"))
    assert confirmations and all(r.endpoint_id == a.id for r in confirmations)
    assert all(r.schedule is None and r.slot not in slots for r in confirmations)
    opened_a, opened_b = opened_at(a), opened_at(b)
    assert opened_a is not None, alerts_worker.output()[-4000:]
    # Without them B waits for the schedule's runs to see the step twice (a run of the 10:00
    # slot, then 18:00); A's confirmation runs, 2 h apart once a run is suspect, see it sooner.
    assert opened_b is None or opened_a < opened_b
    alert = Alert.objects.get(endpoint=a, metric="decode_tps")
    confirmed = [r.id for r in confirmations if r.slot <= opened_a]
    assert alert.details["confirmed_by"] == confirmed
