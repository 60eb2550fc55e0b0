"""The advice cache's data version (advisor.serving): one statement, the same version as the
newest run id and the count and sum of unfinished run ids read by aggregates."""

import pytest
from django.db import connection
from django.db.models import Count, Max, Sum
from django.test.utils import CaptureQueriesContext

from advisor.serving import CLOCK_BUCKET_S, data_version
from benchmarks.models import Run, RunStatus
from tests import advisor_data as seed
from tests import dashboard_data as data

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("at_seed_now")]


def aggregated(now) -> str:
    """The version as the ORM's aggregates read it (the two queries data_version replaced)."""
    newest = Run.objects.aggregate(newest=Max("id"))["newest"]
    pending = Run.objects.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).aggregate(
        n=Count("id"), ids=Sum("id")
    )
    return f"{newest}:{pending['n']}:{pending['ids']}:{int(now.timestamp()) // CLOCK_BUCKET_S}"


def test_the_version_is_the_aggregates_in_one_statement_and_moves_when_a_run_finishes():
    empty = data_version(seed.NOW)
    assert empty == aggregated(seed.NOW) and empty.startswith("None:0:None:")
    _, fast, _, _ = seed.world()
    finished = data_version(seed.NOW)
    queued = [
        data.run(fast, seed.NOW.replace(hour=h), status=RunStatus.QUEUED, ok=0) for h in (3, 4)
    ]
    running = data.run(fast, seed.NOW.replace(hour=5), status=RunStatus.RUNNING, ok=0)
    with CaptureQueriesContext(connection) as captured:
        pending = data_version(seed.NOW)
    assert len(captured.captured_queries) == 1
    assert pending == aggregated(seed.NOW) != finished
    assert pending.split(":")[1:3] == ["3", str(sum(r.id for r in [*queued, running]))]
    Run.objects.filter(id=running.id).update(status=RunStatus.DONE)
    assert data_version(seed.NOW) == aggregated(seed.NOW) != pending
