"""PostgreSQL: samples live in monthly partitions; retention drops whole months."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.conf import settings
from django.db import IntegrityError, connection, transaction

from benchmarks import partitions, retention, tasks
from benchmarks.models import Run, Sample
from tests.api_factories import make_endpoint, make_provider, make_run, make_sample

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint():
    return make_endpoint(make_provider())


def run_with_samples(endpoint, slot: datetime, count: int = 3) -> Run:
    run = make_run(endpoint, slot)
    for index in range(count):
        make_sample(run, index)
    return run


def homes(run: Run) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT tableoid::regclass::text FROM benchmarks_sample WHERE run_id = %s",
            [run.id],
        )
        return {name for (name,) in cursor.fetchall()}


def test_it_keeps_samples_in_a_partitioned_table() -> None:
    assert partitions.is_partitioned()


def test_it_puts_each_sample_in_its_runs_month_and_reads_only_the_months_asked(endpoint):
    created = partitions.ensure_months(now=datetime(2031, 3, 10, tzinfo=UTC))
    assert created == [f"benchmarks_sample_y2031m{m:02d}" for m in (3, 4, 5, 6)]
    run = run_with_samples(endpoint, datetime(2031, 4, 30, 23, 59, tzinfo=UTC))

    assert homes(run) == {"benchmarks_sample_y2031m04"}
    april = Sample.objects.filter(
        slot__gte=datetime(2031, 4, 1, tzinfo=UTC), slot__lt=datetime(2031, 5, 1, tzinfo=UTC)
    )
    plan = april.explain()
    assert "benchmarks_sample_y2031m04" in plan
    assert "benchmarks_sample_y2031m03" not in plan and "benchmarks_sample_default" not in plan
    assert april.count() == 3


def test_it_moves_rows_that_came_early_out_of_the_default_partition(endpoint):
    run = run_with_samples(endpoint, datetime(2032, 2, 10, tzinfo=UTC))
    assert homes(run) == {"benchmarks_sample_default"}

    with time_machine.travel(datetime(2032, 1, 15, tzinfo=UTC), tick=False):
        tasks.ensure_sample_partitions()

    assert homes(run) == {"benchmarks_sample_y2032m02"}
    assert sorted(run.samples.values_list("index", flat=True)) == [0, 1, 2]


def test_it_still_refuses_a_second_sample_with_the_same_run_and_index(endpoint):
    run = run_with_samples(endpoint, datetime(2031, 4, 2, tzinfo=UTC), count=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_sample(run, 0)
    Sample.objects.bulk_create(
        [Sample(run=run, slot=run.slot, index=0, started_at=run.slot)], ignore_conflicts=True
    )
    assert run.samples.count() == 1


def test_it_drops_whole_months_past_retention_and_trims_the_month_of_the_cutoff(endpoint):
    now = datetime(2026, 3, 25, 12, tzinfo=UTC)
    cutoff = now - timedelta(days=settings.TOKSPEED_SAMPLE_RETENTION_DAYS)
    assert cutoff.month == 2  # the cutoff falls inside February 2025
    partitions.ensure_months(now=datetime(2025, 1, 1, tzinfo=UTC), ahead=2)
    january = run_with_samples(endpoint, datetime(2025, 1, 10, tzinfo=UTC))
    early_feb = run_with_samples(endpoint, cutoff - timedelta(days=2))
    late_feb = run_with_samples(endpoint, cutoff + timedelta(days=2))
    # The rows above were written in this test's own transaction: check their deferred foreign
    # keys now, as a commit would, or PostgreSQL refuses to drop a table with checks pending.
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    report = retention.expire_samples(now=now)

    assert report.dropped_partitions == ["benchmarks_sample_y2025m01"]
    assert "benchmarks_sample_y2025m01" not in partitions.months()
    assert report.deleted == 3  # only early February, row by row
    assert january.samples.count() == 0 and early_feb.samples.count() == 0
    assert late_feb.samples.count() == 3
    assert Run.objects.filter(id__in=[january.id, early_feb.id, late_feb.id]).count() == 3
