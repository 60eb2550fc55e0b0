"""Local-time demand (issue 28, bug 4): a provider whose evening peak follows New York's clock
moves by an hour in UTC on the March and November daylight-saving dates. With its demand time
zone set, or with none (the daylight-saving guard), that opens no alert; a real slowdown of one
slot, as large as the peak, on another date still does. Stored runs, evaluated as each ends
(the clock pinned a minute after its slot)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine

from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.models import Alert
from alerts.testing import store_history
from benchmarks.models import Vantage, Workload
from providers.models import Endpoint, Provider

pytestmark = pytest.mark.django_db

NEW_YORK = ZoneInfo("America/New_York")
DECODE, TTFT = 70.0, 600.0
# Three runs a day at fixed UTC times, as schedules run: 02:30 UTC is 21:30 in New York's
# winter (in the peak) and 22:30 in its summer (out of it); 22:30 UTC is 17:30 in winter (out)
# and 18:30 in summer (in). So each change puts one slot into the peak: 22:30 in March,
# 02:30 in November.
TIMES = ((2, 30), (10, 30), (22, 30))


def in_peak(slot: datetime) -> bool:
    """The provider's evening peak: 18–22 h, New York time."""
    return 18 <= slot.astimezone(NEW_YORK).hour < 22


def slots(start: datetime, end: datetime) -> list[datetime]:
    day, out = start.replace(hour=0, minute=0), []
    while day <= end:
        out += [
            day.replace(hour=h, minute=m)
            for h, m in TIMES
            if start < day.replace(hour=h, minute=m) <= end
        ]
        day += timedelta(days=1)
    return out


@pytest.fixture
def series():
    provider = Provider.objects.create(
        slug="acme", name="Acme", protocol="openai_chat", base_url="https://acme.example/v1"
    )
    endpoint = Endpoint.objects.create(provider=provider, slug="acme-llama", model="llama-3-70b")
    workload = Workload.objects.create(slug="w", name="Standard prompt")
    vantage = Vantage.objects.create(slug="eu", label="EU probe", queue="eu")
    return {"endpoint": endpoint, "workload": workload, "vantage": vantage}


def evening_peak(series, start, end, *, slower=None):
    """Runs from start to end: 25 % slower decode and 35 % higher TTFT in New York's evening
    (and in `slower`'s slots, when given), noise 5 % a sample."""

    def worse(slot: datetime) -> bool:
        return in_peak(slot) or (slower is not None and slower(slot))

    return store_history(
        **series,
        slots=slots(start, end),
        decode=lambda s: DECODE * (0.75 if worse(s) else 1.0),
        ttft=lambda s: TTFT * (1.35 if worse(s) else 1.0),
        seed=int(start.timestamp()) % 1000,
    )


def evaluate_from(runs, start: datetime) -> tuple[list[int], list[str]]:
    """Evaluate every run from `start` on as it ends: the alerts that opened, and the verdicts
    put down to a daylight-saving change."""
    opened, held = [], []
    for run in runs:
        if run.slot >= start:
            with time_machine.travel(run.slot + timedelta(minutes=1), tick=False):
                outcome = evaluate_after_run(run.id)
            opened += outcome.opened
            held += [v for v in outcome.verdicts.values() if "daylight-saving" in v]
    return opened, held


@pytest.mark.parametrize(
    ("start", "change", "end"),
    [
        (
            datetime(2026, 2, 1, tzinfo=UTC),
            datetime(2026, 3, 8, tzinfo=UTC),
            datetime(2026, 3, 26, tzinfo=UTC),
        ),
        (
            datetime(2026, 9, 28, tzinfo=UTC),
            datetime(2026, 11, 1, tzinfo=UTC),
            datetime(2026, 11, 19, tzinfo=UTC),
        ),
    ],
    ids=["march", "november"],
)
@pytest.mark.parametrize("zone", ["America/New_York", ""], ids=["zone set", "no zone"])
def test_it_opens_no_alert_when_the_evening_peak_moves_an_hour_on_a_daylight_saving_date(
    series, start, change, end, zone
) -> None:
    Provider.objects.update(demand_time_zone=zone)
    runs = evening_peak(series, start, end)
    # The peak moved into one slot's run at the change: that slot is a quarter slower since.
    week = timedelta(days=7)
    moved = [r for r in runs if change < r.slot < change + week and not in_peak(r.slot - week)]
    moved = [r for r in moved if in_peak(r.slot)]
    assert len(moved) >= 6 and all(r.decode_tps_p50 < DECODE * 0.8 for r in moved)
    opened, held = evaluate_from(runs, change - timedelta(days=3))
    assert opened == [] and not Alert.objects.exists()
    if not zone:
        # Without a zone the guard held what the slot arms found, and says why.
        assert held and all(v.startswith("hold: regression") for v in held), held
        assert "2026-" in held[0] and "moves by an hour" in held[0]


@pytest.mark.parametrize("zone", ["America/New_York", ""], ids=["zone set", "no zone"])
def test_it_still_opens_on_a_one_slot_slowdown_of_the_same_size_on_another_date(
    series, zone
) -> None:
    Provider.objects.update(demand_time_zone=zone)
    onset = datetime(
        2026, 4, 20, 12, tzinfo=UTC
    )  # three weeks after the EU change, six after the US one

    def slot_slower(slot: datetime) -> bool:
        return slot >= onset and slot.hour == 10  # the 10:30 UTC run: 06:30 in New York

    runs = evening_peak(
        series, datetime(2026, 3, 1, tzinfo=UTC), onset + timedelta(days=4), slower=slot_slower
    )
    opened, held = evaluate_from(runs, onset - timedelta(days=2))
    alert = Alert.objects.get(metric="decode_tps")
    assert opened[0] == alert.id
    assert alert.opened_at - onset < timedelta(days=3)
    assert held == []
    # Its email's bucket table names the slots in the clock they follow.
    labels = [row["label"] for row in alert.events.get(kind="opened").snapshot["buckets"]]
    assert labels and all(label.endswith(zone or "UTC") for label in labels), labels
