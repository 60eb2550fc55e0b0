"""The daily change-point pass: level shifts annotated for charts, never an email."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from alerts.models import Alert, AlertEvent, ChangePoint
from alerts.pages.selectors import change_points
from alerts.tasks import detect_change_points
from alerts.testing import daily_slots, store_history
from benchmarks.models import Vantage, Workload
from providers.models import Endpoint, Provider

pytestmark = pytest.mark.django_db
# The pass looks back from now: the history ends at yesterday's 18:00 slot.
END = timezone.now().astimezone(UTC).replace(
    hour=18, minute=0, second=0, microsecond=0
) - timedelta(days=1)
STEP = END - timedelta(days=8, hours=8)  # a 02:00 slot


def cycle(slot: datetime) -> float:
    """±15 % by time of day."""
    return 1 + 0.15 * math.sin(2 * math.pi * slot.hour / 24)


@pytest.fixture
def series():
    provider = Provider.objects.create(
        slug="acme", name="Acme", protocol="openai_chat", base_url="https://acme.example/v1"
    )
    return {
        "endpoint": Endpoint.objects.create(provider=provider, slug="acme-m", model="m"),
        "workload": Workload.objects.create(slug="w", name="Standard prompt"),
        "vantage": Vantage.objects.create(slug="eu", label="EU probe", queue="eu"),
    }


def test_it_marks_where_a_series_stepped_and_nothing_else(series, settings) -> None:
    settings.ALERTS_CHANGEPOINT_DAYS = 30
    store_history(
        **series,
        slots=daily_slots(end=END, days=20),
        decode=lambda s: 70.0 * cycle(s) * (0.7 if s >= STEP else 1.0),  # 30 % slower
        ttft=lambda s: 600.0 * cycle(s),  # a daily cycle only
    )
    detect_change_points.run()
    point = ChangePoint.objects.get()  # decode's step; TTFT's cycle is no change
    assert point.metric == "decode_tps"
    assert abs(point.at - STEP) <= timedelta(hours=8)  # within one run of the step
    assert point.change == pytest.approx(-0.3, abs=0.05)
    assert change_points(series["endpoint"].id)[0]["change"] == pytest.approx(point.change)
    detect_change_points.run()  # the daily pass again: the same annotation, once
    assert ChangePoint.objects.get().at == point.at
    assert not Alert.objects.exists() and not AlertEvent.objects.exists()  # never alerts


def test_it_does_not_call_a_new_client_version_a_change(series) -> None:
    old = daily_slots(end=STEP, days=10)
    store_history(
        **series,
        slots=old,
        decode=lambda s: 70.0,
        ttft=lambda s: 600.0,
        client_version="tokspeed 0.1",
    )
    new = [s for s in daily_slots(end=END, days=20) if s > STEP]
    store_history(
        **series,
        slots=new,
        decode=lambda s: 50.0,
        ttft=lambda s: 600.0,
        client_version="tokspeed 0.2",
        seed=1,
    )
    detect_change_points.run()
    assert not ChangePoint.objects.exists()  # two histories, each without a step
