"""An exact history's grouped reads written out for PostgreSQL (selectors.history_sql) give the
answers of the ORM queries they replace: the endpoint history and the compare page's
histories at every exact window, with and without them."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from benchmarks.models import Run, RunStatus
from benchmarks.selectors import history
from benchmarks.selectors.history_sql import RunWindow
from benchmarks.selectors.runs import tallied
from benchmarks.selectors.scope import Workloads, resolve_vantage
from benchmarks.synthetic import seed_history
from providers.models import Endpoint
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)
WINDOWS = (24, 72, 168, 720, 2160)


@pytest.fixture
def endpoints():
    with time_machine.travel(NOW, tick=False):
        seed_history(endpoints=3, days=95, workloads=4, slots=3, samples_per_run=1, now=NOW)
        found = list(Endpoint.objects.order_by("id"))
        # Errors whose categories tie, a run served below its lane and one not finished: the
        # first two categories appear in this order, newest run first.
        base = Workloads.load().base()
        slots = [NOW - timedelta(hours=h) for h in (1, 4, 30)]
        tallies = ({"timeout": 2, "auth": 1}, {"auth": 1}, {"quota": 3, "odd": "x"})
        for slot, tally in zip(slots, tallies, strict=True):
            run = data.run(found[0], slot, wl=base, van=Run.objects.first().vantage, errors=3)
            run.summary = {"errors_by_category": tally}
            run.save(update_fields=["summary"])
        Run.objects.filter(pk=run.pk).update(downgraded=True)
        newest = Run.objects.filter(endpoint=found[1]).order_by("-slot").first()
        Run.objects.filter(pk=newest.pk).update(status=RunStatus.RUNNING)
        yield found


def _without_sql(monkeypatch):
    monkeypatch.setattr(RunWindow, "of", classmethod(lambda cls, *a, **k: None))


@pytest.mark.parametrize("hours", WINDOWS)
def test_an_endpoints_history_is_the_orm_reads_answer(endpoints, monkeypatch, hours):
    with time_machine.travel(NOW, tick=False):
        workloads = Workloads.load()
        assert RunWindow.of(resolve_vantage(None), NOW, endpoint_id=endpoints[0].id) is not None
        cases = [(ep, w.slug) for ep in endpoints for w in workloads.items]
        written = [history.endpoint_history(ep, workload=w, window_hours=hours) for ep, w in cases]
        compared = history.compare_histories(endpoints, window_hours=hours)
        _without_sql(monkeypatch)
        assert written == [
            history.endpoint_history(ep, workload=w, window_hours=hours) for ep, w in cases
        ]
        assert compared == history.compare_histories(endpoints, window_hours=hours)
    assert any(h["concurrency"] for h in written) and any(h["errors"] for h in written)
    assert any(h["context"]["pairs"] for h in written)


def test_it_sums_error_categories_most_first_ties_in_the_order_they_appear():
    tallies = [{"timeout": 2, "auth": 1}, None, {"auth": 1, "odd": "x"}, ["x"], {"quota": 1}]
    assert tallied(tallies) == [
        {"category": "timeout", "count": 2},
        {"category": "auth", "count": 2},
        {"category": "quota", "count": 1},
    ]


def test_it_leaves_out_runs_served_below_their_lane(endpoints):
    with time_machine.travel(NOW, tick=False):
        errors = history.endpoint_history(endpoints[0], window_hours=24)["errors"]
    assert {"timeout", "auth"} <= {e["category"] for e in errors}
    assert "quota" not in {e["category"] for e in errors}  # that run was served below its lane
