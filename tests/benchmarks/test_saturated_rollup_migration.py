"""Migration benchmarks 0030 counts the saturated runs already in the day and month rollups, and
drops the window rollups for the daily refresh to write them again with the count."""

from datetime import UTC, datetime, timedelta

import pytest

from tests import dashboard_data as data
from tests.api_factories import make_endpoint, make_provider, make_run
from tests.migrations import migrate, migrate_to_latest

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BEFORE = [("benchmarks", "0029_rollup_day_points")]
AFTER = [("benchmarks", "0030_rollup_saturated_runs")]
SLOT = datetime(2026, 6, 14, 2, 0, tzinfo=UTC)


def test_it_counts_saturated_runs_into_existing_rollups():
    old = migrate(BEFORE)
    try:
        endpoint = make_endpoint(make_provider("acme"))
        # The standard workload and vantage made here: a transactional test before this one
        # (same xdist worker) flushed the rows migration 0002 seeds
        made = {"wl": data.workload(), "van": data.vantage()}
        runs = [make_run(endpoint, SLOT + timedelta(hours=h), **made) for h in (0, 8, 16)]
        type(runs[0]).objects.filter(id__in=[runs[0].id, runs[2].id]).update(saturated_count=2)
        RunRollup = old.get_model("benchmarks", "RunRollup")
        WindowRollup = old.get_model("benchmarks", "WindowRollup")
        key = {
            "endpoint_id": endpoint.id,
            "workload_id": runs[0].workload_id,
            "vantage_id": runs[0].vantage_id,
            "concurrency": runs[0].concurrency,
        }
        for run in runs:
            for span, day in (("day", SLOT.date()), ("month", SLOT.date().replace(day=1))):
                RunRollup.objects.update_or_create(
                    **key, span=span, day=day, tod_bucket=run.tod_bucket, defaults={"runs": 1}
                )
        WindowRollup.objects.create(**key, days=30, through_day=SLOT.date(), tod_bucket=-1)

        new = migrate(AFTER)

        counted = {
            (r.span, r.tod_bucket): r.saturated_runs
            for r in new.get_model("benchmarks", "RunRollup").objects.all()
        }
        buckets = [run.tod_bucket for run in runs]
        assert counted == {
            (span, bucket): int(bucket in (buckets[0], buckets[2]))
            for span in ("day", "month")
            for bucket in buckets
        }
        assert not new.get_model("benchmarks", "WindowRollup").objects.exists()
    finally:
        migrate_to_latest()
