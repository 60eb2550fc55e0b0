"""The endpoint page's open breakers: one statement for every vantage, the runner's rule
(breaker.trip) for each."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from benchmarks.breaker import REFUSED_PREFIX, Trip, open_trips, trip
from benchmarks.models import RunStatus, Vantage
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
TIMED_OUT = {"errors_by_category": {"timeout": 5}}


def _failed(ep, slot, van, *, summary=None, reason=""):
    run = data.run(ep, slot, van=van, ok=0, errors=5, summary=summary or TIMED_OUT)
    if reason:
        run.failure_reason = reason
        run.save(update_fields=["failure_reason"])
    return run


def _vantage(slug: str) -> Vantage:
    label = "Far away" if slug == "far" else f"From {slug}"
    return Vantage.objects.create(slug=slug, label=label, queue=slug)


def test_it_names_each_vantage_whose_last_runs_all_timed_out_by_slug():
    with time_machine.travel(NOW, tick=False):
        prov = data.provider("p")
        ep, other = data.endpoint(prov, "ep"), data.endpoint(prov, "other")
        slots = data.recent_slots(4, now=NOW)
        lab, edge, cloud, quiet = (_vantage(s) for s in ("lab", "edge", "cloud", "quiet"))
        # edge: the last two timed out (one refused by the breaker), an older one was fine.
        data.run(ep, slots[0], van=edge)
        _failed(ep, slots[1], edge)
        _failed(ep, slots[2], edge, reason=f"{REFUSED_PREFIX} the last 2 runs failed")
        # A run still queued is not finished: the breaker reads the finished ones.
        data.run(ep, slots[3], van=edge, status=RunStatus.QUEUED)
        # lab: both timed out; a stream that broke counts as a timeout too.
        _failed(ep, slots[1], lab)
        _failed(ep, slots[2], lab, summary={"errors_by_category": {"stream_broken": 2}})
        # cloud: the newest failed for another reason; quiet: one run only.
        _failed(ep, slots[1], cloud)
        _failed(ep, slots[2], cloud, summary={"errors_by_category": {"http_500": 5}})
        _failed(ep, slots[2], quiet)
        # Another endpoint's runs at a vantage this one never ran from.
        far = _vantage("far")
        _failed(other, slots[1], far)
        _failed(other, slots[2], far)

        found = open_trips(ep)

        reason = "the last 2 runs failed by timeout"
        assert found == [
            Trip(vantage=edge.label, since=slots[1], reason=reason),
            Trip(vantage=lab.label, since=slots[1], reason=reason),
        ]
        each = [trip(ep.id, v.id) for v in sorted((lab, edge, cloud, quiet), key=lambda v: v.slug)]
        assert found == [t for t in each if t is not None]
        assert open_trips(other) == [Trip(vantage="Far away", since=slots[1], reason=reason)]


def test_it_finds_none_without_runs_or_when_the_breaker_is_off(settings):
    with time_machine.travel(NOW, tick=False):
        ep = data.endpoint(data.provider("p"), "ep")
        assert open_trips(ep) == []
        van = _vantage("lab")
        for hours in (4, 2):
            _failed(ep, NOW - timedelta(hours=hours), van)
        assert len(open_trips(ep)) == 1
        settings.TOKSPEED_BREAKER_RUNS = 0
        assert open_trips(ep) == []
