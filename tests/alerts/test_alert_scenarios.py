"""Scenarios driven through real runs against the simulator, emails through real SMTP.

Each run is executed in this process by the runner (benchmarks.runner.execute) against the
session's simulator; its end publishes "alerts.evaluate_after_run" (captured in a temporary
filesystem broker and checked), and the evaluation it asks for runs here. Older history is a
few real runs copied to earlier slots (time-shifted rows), so each scenario streams ~10 runs of
5 short requests rather than days of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from alerts.delivery import outbox
from alerts.lifecycle.actions import perform
from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.models import Alert, Delivery, Kind, Status
from alerts.testing import daily_slots
from benchmarks import runner
from benchmarks.buckets import tod_bucket
from benchmarks.models import Run, Sample, Vantage, Workload
from providers.models import Endpoint, Provider
from tests.alerts.test_alert_emails import SmtpSink, body, smtp_sink
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options, queued_tasks

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MODEL = "sim-fast+tps=300+ttft=40+tokens=60"
# Runs happen at past slots: the last baseline slot is yesterday's 18:00, so slots never lie
# in the future (the runner measures now; only the slot, the series' clock, is shifted).
T0 = timezone.now().replace(hour=18, minute=0, second=0, microsecond=0) - timedelta(days=4)


@pytest.fixture
def fs_broker(tmp_path: Path) -> Iterator[Path]:
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):
        yield tmp_path


@pytest.fixture
def smtp() -> Iterator[SmtpSink]:
    with smtp_sink() as sink:
        yield sink


@pytest.fixture
def series(sim_control, request) -> dict:
    provider = Provider.objects.create(
        slug="sim",
        name="Sim",
        protocol="openai_chat",
        base_url=sim_control.openai_base,
        simulated=True,
    )
    return {
        "endpoint": Endpoint.objects.create(provider=provider, slug="sim-m", model=MODEL),
        "workload": Workload.objects.create(
            slug="w", name="Standard prompt", max_output_tokens=200
        ),
        "vantage": Vantage.objects.create(slug="here", label="This machine", queue="here"),
    }


def real_run(series: dict, slot, fs_broker: Path):
    """Execute a run now (at a past slot), then the evaluation its end asked for."""
    run = Run.objects.create(**series, slot=slot, concurrency=1, repetitions=5)
    assert runner.execute(run.id) in ("done", "partial", "failed")
    # The runner files a run under the time of day it was measured (now); these runs stand
    # for runs measured at their slots.
    Run.objects.filter(id=run.id).update(tod_bucket=tod_bucket(slot))
    requested = [t for t in queued_tasks(fs_broker) if t["args"] == [run.id]]
    asked = sorted(t["task"] for t in requested)
    assert asked == ["advisor.digest_run", "alerts.evaluate_after_run"]
    return evaluate_after_run(run.id)


def copy_run(run: Run, slot) -> None:
    """Time-shifted rows: the same measurements, stored as if taken at another slot."""
    samples = list(run.samples.all())
    run.pk, run.id, run.slot, run.tod_bucket = None, None, slot, tod_bucket(slot)
    run.save()
    for sample in samples:
        sample.pk, sample.id, sample.run = None, None, run
    Sample.objects.bulk_create(samples)


def baseline(series: dict, fs_broker: Path, *, factor_by_hour=None, sim=None) -> None:
    """Eight days of history (3 slots a day; a baseline needs 12 runs before the 72 h
    window): one real run per time of day, copied back."""
    slots = daily_slots(end=T0, days=8)
    for hour in (2, 10, 18):
        if factor_by_hour:
            sim.control(speed_factor=factor_by_hour[hour])
        at_hour = [s for s in slots if s.hour == hour]
        real_run(series, at_hour[-1], fs_broker)
        measured = Run.objects.get(slot=at_hour[-1], endpoint=series["endpoint"])
        for slot in at_hour[:-1]:
            copy_run(Run.objects.get(pk=measured.pk), slot)


def send() -> list:
    outbox.dispatch(Delivery.IMMEDIATE)
    return outbox.deliver().sent


def hours(*offsets: float) -> list:
    return [T0 + timedelta(hours=h) for h in offsets]


def test_it_alerts_once_on_a_30_percent_slowdown_and_once_on_recovery(
    series, sim_control, fs_broker, smtp
) -> None:
    baseline(series, fs_broker)
    sim_control.control(speed_factor=0.7)  # the provider slows down by 30 %
    outcomes = [real_run(series, slot, fs_broker) for slot in hours(25, 26, 27)]
    assert [bool(o.opened) for o in outcomes] == [False, False, True]  # 2nd positive opens
    assert outcomes[1].verdicts["decode_tps"].startswith("positive")
    alert = Alert.objects.get()
    assert alert.metric == "decode_tps" and alert.shift == pytest.approx(1 - 0.7, abs=0.06)
    assert 0.05 <= alert.ci_low <= alert.shift <= alert.ci_high
    assert len(send()) == 1 and send() == []
    [opened] = smtp.messages
    assert opened["To"] == "oncall@team.example"
    assert "Decode speed of sim-fast+tps=300" in opened["Subject"]
    assert "% slower" in opened["Subject"]

    sim_control.control(speed_factor=1.0)  # recovered
    outcomes = [real_run(series, slot, fs_broker) for slot in hours(52, 53, 54)]
    # After a day without runs the first run back is clear and surely back: the second resolves.
    assert [bool(o.resolved) for o in outcomes] == [False, True, False]
    alert.refresh_from_db()
    assert alert.status == Status.RESOLVED
    assert len(send()) == 1 and send() == []
    resolved = smtp.messages[1]
    assert resolved["Subject"].startswith("[tokspeed] Resolved: Decode speed of sim-fast")
    assert "back to normal" in body(resolved, "plain")
    assert len(smtp.messages) == 2


def test_it_never_alerts_on_a_pure_time_of_day_cycle(series, sim_control, fs_broker) -> None:
    evenings_slow = {2: 1.0, 10: 1.0, 18: 0.7}  # every evening is 30 % slower
    baseline(series, fs_broker, factor_by_hour=evenings_slow, sim=sim_control)
    sim_control.control(speed_factor=0.7)
    # The last 24 h hold only evening runs: 30 % below the overall median, as every evening.
    outcomes = [real_run(series, slot, fs_broker) for slot in hours(24, 26)]
    assert not Alert.objects.exists()
    assert outcomes[-1].verdicts["decode_tps"].startswith("clear")
    recent = Run.objects.filter(slot__gt=T0 + timedelta(hours=20)).values_list(
        "decode_tps_p50", flat=True
    )
    earlier = Run.objects.filter(slot__lte=T0).values_list("decode_tps_p50", flat=True)
    assert max(recent) < 0.85 * sorted(earlier)[len(earlier) // 2]  # naive comparison would fire


def test_it_opens_an_outage_on_a_burst_of_529s(series, sim_control, fs_broker, smtp) -> None:
    real_run(series, T0, fs_broker)
    provider = series["endpoint"].provider
    provider.extra_headers = {"x-sim-fault": "529"}  # the provider answers 529 overloaded
    provider.save()
    first = real_run(series, T0 + timedelta(hours=8), fs_broker)
    assert first.opened == [] and not Alert.objects.exists()  # one failed run is not an outage
    outcome = real_run(series, T0 + timedelta(hours=16), fs_broker)
    alert = Alert.objects.get()
    assert outcome.opened == [alert.id] and alert.kind == Kind.OUTAGE
    assert alert.error_categories == {"overloaded": 10}
    assert len(send()) == 1
    assert "outage: 100 % of requests failed (overloaded)" in smtp.messages[0]["Subject"]


def test_it_stops_alerting_on_a_step_accepted_as_the_new_baseline(
    series, sim_control, fs_broker, smtp, admin_user
) -> None:
    baseline(series, fs_broker)
    sim_control.control(speed_factor=0.7)
    for slot in hours(25, 26, 27):
        real_run(series, slot, fs_broker)
    alert = Alert.objects.get()
    perform(alert.id, "accept", user=admin_user)
    # Two more days at the new level (copies of the last slow run), then two real runs: their
    # baseline is the accepted level, with enough samples to compare, and nothing alerts.
    slow = Run.objects.get(slot=T0 + timedelta(hours=27), endpoint=series["endpoint"])
    for slot in hours(*range(35, 75, 8)):
        copy_run(Run.objects.get(pk=slow.pk), slot)
    outcomes = [real_run(series, slot, fs_broker) for slot in hours(76, 77)]
    assert outcomes[-1].verdicts["decode_tps"].startswith("clear")
    assert not any(o.opened for o in outcomes) and Alert.objects.count() == 1
    assert len(send()) == 1  # the opening only: accepting and later runs email nobody
