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
from tests.sqlite_script import run_on_sqlite

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


# `make run`'s SQLite: the same statement, the same version as the aggregates there.
_SQLITE_SCRIPT = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from benchmarks.models import RunStatus
from advisor.serving import data_version
from tests import advisor_data as seed, dashboard_data as data
from tests.advisor.test_advisor_serving import aggregated
_, fast, _, _ = seed.world()
data.run(fast, seed.NOW.replace(hour=3), status=RunStatus.QUEUED, ok=0)
data.run(fast, seed.NOW.replace(hour=4), status=RunStatus.RUNNING, ok=0)
print("VERSIONS", data_version(seed.NOW), aggregated(seed.NOW))
"""


@pytest.mark.slow
def test_the_version_is_the_aggregates_on_sqlite(tmp_path):
    done = run_on_sqlite(_SQLITE_SCRIPT, tmp_path)
    printed = next(line for line in done.stdout.splitlines() if line.startswith("VERSIONS "))
    ours, theirs = printed.split()[1:]
    assert ours == theirs and ours.split(":")[1] == "2", printed
