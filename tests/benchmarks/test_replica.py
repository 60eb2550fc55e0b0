"""A read replica: read-only pages and API read it; writes and pages after a write do not.

The suite's "replica" alias is a second connection to the same test database (TEST MIRROR,
tokspeed/test_settings.py), so each query shows which alias, i.e. which machine, it went to.
"""

from collections.abc import Callable, Iterator

import pytest
from django.db import connections
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from benchmarks.models import Run
from tests import dashboard_data as data
from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run, make_sample

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [
    # Committed rows: the replica connection sees only what the primary committed.
    pytest.mark.django_db(transaction=True, databases=["default", "replica"]),
    pytest.mark.usefixtures("fresh_throttles"),
]


@pytest.fixture(autouse=True)
def routed() -> Iterator[None]:
    with override_settings(DATABASE_ROUTERS=["tokspeed.db_router.ReplicaRouter"]):
        yield


@pytest.fixture
def run() -> Run:
    data.default_workloads()  # a transactional test starts from empty tables
    data.vantage()
    endpoint = make_endpoint(make_provider("wafer"), "wafer-fast")
    made = make_run(endpoint, hours_ago(3))
    for index in range(3):
        make_sample(made, index)
    return made


def sql_by_alias(action: Callable[[], object]) -> dict[str, list[str]]:
    with (
        CaptureQueriesContext(connections["default"]) as primary,
        CaptureQueriesContext(connections["replica"]) as replica,
    ):
        action()
    return {
        "default": [q["sql"] for q in primary.captured_queries],
        "replica": [q["sql"] for q in replica.captured_queries],
    }


def touching(sqls: list[str], table: str) -> list[str]:
    return [sql for sql in sqls if f'"{table}"' in sql]


def test_it_reads_the_leaderboard_api_from_the_replica(reader, run) -> None:
    used = sql_by_alias(lambda: reader.get("/api/v1/leaderboard/").json())

    assert touching(used["replica"], "benchmarks_run")
    assert not touching(used["default"], "benchmarks_run")


def test_it_streams_a_samples_export_from_the_replica(reader, run) -> None:
    def export() -> None:
        response = reader.get("/api/v1/export/samples.csv")
        body = b"".join(response.streaming_content).decode()
        assert body.count("\n") >= 4 and "# end of export: 3 rows" in body

    used = sql_by_alias(export)
    assert touching(used["replica"], "benchmarks_sample")
    assert not touching(used["default"], "benchmarks_sample")


def test_it_reads_the_run_page_from_the_primary(client, plain_user, run) -> None:
    client.force_login(plain_user)
    used = sql_by_alias(lambda: client.get(f"/runs/{run.id}/"))

    assert touching(used["default"], "benchmarks_sample")
    assert used["replica"] == []


def test_it_keeps_a_client_that_just_wrote_on_the_primary(staff_user, run) -> None:
    client = APIClient()
    client.force_authenticate(staff_user)
    wrote = client.post("/api/v1/runs/", {"endpoint": "no-such-endpoint"}, format="json")
    assert wrote.status_code == 400
    assert wrote.cookies["tokspeed_primary"]["max-age"] == 10

    used = sql_by_alias(lambda: client.get("/api/v1/leaderboard/").json())
    assert touching(used["default"], "benchmarks_run")
    assert used["replica"] == []


def test_it_sends_every_write_to_the_primary_even_inside_a_read_view(run) -> None:
    from tokspeed.db_router import replica_reads

    with replica_reads():
        used = sql_by_alias(lambda: Run.objects.filter(id=run.id).update(failure_reason="x"))
        assert Run.objects.db_manager().get_queryset().db == "replica"
    assert touching(used["default"], "benchmarks_run") and used["replica"] == []


def test_it_reads_the_runs_list_page_from_the_replica(client, plain_user, run) -> None:
    client.force_login(plain_user)
    used = sql_by_alias(lambda: client.get("/runs/", {"endpoint": "wafer-fast"}))

    assert touching(used["replica"], "benchmarks_run")
    assert not touching(used["default"], "benchmarks_run")


def test_it_reads_the_exports_page_from_the_primary(client, plain_user, run) -> None:
    client.force_login(plain_user)
    used = sql_by_alias(lambda: client.get("/exports/"))

    assert touching(used["default"], "benchmarks_export")
    assert not touching(used["replica"], "benchmarks_export")
