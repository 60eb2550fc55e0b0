"""Retention: samples of runs older than TOKSPEED_SAMPLE_RETENTION_DAYS go; runs stay."""

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import override_settings

from benchmarks import tasks
from benchmarks.models import Run, Sample
from tests.api_factories import make_endpoint, make_provider, make_run, make_sample

pytestmark = pytest.mark.django_db
NOW = datetime(2027, 3, 15, 12, 0, tzinfo=UTC)


@pytest.fixture
def runs_by_age() -> dict[int, Run]:
    endpoint = make_endpoint(make_provider())
    made = {}
    for days in (401, 399, 30):
        run = make_run(endpoint, NOW - timedelta(days=days), ttft_ms=400.0 + days)
        for index in range(3):
            make_sample(run, index)
        made[days] = run
    return made


def kept_samples() -> dict[int, int]:
    return {run.id: run.samples.count() for run in Run.objects.all()}


def test_it_deletes_samples_past_400_days_by_default_and_keeps_every_run(runs_by_age) -> None:
    assert settings.TOKSPEED_SAMPLE_RETENTION_DAYS == 400
    out = StringIO()
    with time_machine.travel(NOW, tick=False):
        call_command("expire_samples", "--batch-size", "2", stdout=out)

    counts = kept_samples()
    assert counts == {runs_by_age[401].id: 0, runs_by_age[399].id: 3, runs_by_age[30].id: 3}
    # The run and its summary survive: boards and history still show it.
    old = Run.objects.get(id=runs_by_age[401].id)
    assert old.ttft_p50_ms == 801.0
    assert out.getvalue().startswith("Deleted 3 samples of runs slotted before 2026-02-08T12:00")
    assert "in 2 batches" in out.getvalue()


@override_settings(TOKSPEED_SAMPLE_RETENTION_DAYS=60)
def test_it_follows_the_configured_retention_in_the_daily_task(runs_by_age) -> None:
    with time_machine.travel(NOW, tick=False):
        tasks.expire_samples()

    assert Sample.objects.filter(run=runs_by_age[30]).count() == 3
    assert Sample.objects.count() == 3
    assert Run.objects.count() == 3


@override_settings(TOKSPEED_SAMPLE_RETENTION_DAYS=0)
def test_it_keeps_every_sample_when_retention_is_off(runs_by_age) -> None:
    out = StringIO()
    with time_machine.travel(NOW, tick=False):
        call_command("expire_samples", stdout=out)

    assert Sample.objects.count() == 9
    assert "Retention is off" in out.getvalue()


def test_it_refuses_a_batch_size_below_one(runs_by_age) -> None:
    with pytest.raises(CommandError, match="at least 1"):
        call_command("expire_samples", "--batch-size", "0")
    assert Sample.objects.count() == 9


def test_it_is_scheduled_daily_by_beat() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["expire-samples"]
    assert entry["task"] == tasks.expire_samples.name


def test_it_tells_on_the_run_page_that_old_requests_were_removed(runs_by_age, client) -> None:
    with time_machine.travel(NOW, tick=False):
        client.force_login(User.objects.create_user("reader"))
        call_command("expire_samples")
        old = client.get(f"/runs/{runs_by_age[401].id}/").content.decode()
        recent = client.get(f"/runs/{runs_by_age[30].id}/").content.decode()

    assert "Requests removed after retention" in old and "kept for 400 days" in old
    assert "Requests removed" not in recent and 'id="samples"' in recent
