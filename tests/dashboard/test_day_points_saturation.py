"""History charts over 90 days: each day's point counts the runs whose client was saturated
(docs/design.md §4, "Client saturation"), read from the day rollups like the rest of it."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import User

from benchmarks.models import Run
from benchmarks.rollups.write import rebuild
from benchmarks.selectors.history import endpoint_history
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)


def test_each_day_point_counts_its_saturated_runs(client):
    with time_machine.travel(NOW, tick=False):
        data.default_workloads()
        data.vantage()
        ep = data.endpoint(data.provider("a"), "a")
        start = datetime(2026, 6, 10, tzinfo=UTC)
        runs = [data.run(ep, start + timedelta(days=d, hours=h)) for d in range(3) for h in (1, 9)]
        # Day 0: both runs saturated; day 1: one; day 2: none.
        Run.objects.filter(id__in=[runs[0].id, runs[1].id, runs[3].id]).update(saturated_count=4)
        rebuild()
        history = endpoint_history(ep, window_hours=8760)
        client.force_login(User.objects.create_user("viewer"))
        api = client.get(f"/api/v1/endpoints/{ep.slug}/history/", {"window": "365d"}).json()

    assert history["points"] == "day"
    assert [(p["day"], p["runs"], p["saturated_runs"]) for p in history["runs"]] == [
        ("2026-06-10", 2, 2),
        ("2026-06-11", 2, 1),
        ("2026-06-12", 2, 0),
    ]
    assert [p["saturated_runs"] for p in api["runs"]] == [2, 1, 0]
    assert history["summary"]["saturated_runs"] == 3
