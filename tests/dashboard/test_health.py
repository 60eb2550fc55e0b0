"""/health/ for load balancers: 200 when every part is well, 503 naming the failing part."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from benchmarks import pulse
from benchmarks.models import Pulse, Run, RunStatus, Vantage, Workload
from providers.models import Endpoint, Provider
from tests.celery_helpers import broker
from tests.fault_helpers import free_port

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
pytestmark = pytest.mark.django_db


def well() -> None:
    pulse.beat(Pulse.TICK, kind=Pulse.TICK)
    pulse.beat("probe@host", kind=pulse.WORKER, detail="queues: eu")


@time_machine.travel(NOW, tick=False)
def test_it_answers_200_without_login_when_every_part_is_well(client) -> None:
    well()
    response = client.get("/health/")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "ok" and body["failing"] == []
    assert set(body["checks"]) == {"database", "broker", "beat", "queue", "workers", "outbox"}
    assert body["checks"]["workers"]["detail"] == "1 seen in the last 120 s"
    assert response["Cache-Control"].startswith("max-age=0")


@time_machine.travel(NOW, tick=False)
def test_it_answers_503_naming_a_silent_beat_an_old_queue_and_no_worker(client, settings):
    well()
    provider = Provider.objects.create(
        slug="p", name="P", protocol="openai_chat", base_url="https://p.example/v1"
    )
    endpoint = Endpoint.objects.create(provider=provider, slug="e", model="m")
    Run.objects.create(
        endpoint=endpoint,
        workload=Workload.objects.create(slug="w", name="w"),
        vantage=Vantage.objects.create(slug="eu", label="EU", queue="eu"),
        slot=NOW - timedelta(minutes=20),
        status=RunStatus.QUEUED,
    )
    with time_machine.travel(NOW + timedelta(minutes=5), tick=False):
        response = client.get("/health/")
    body = response.json()
    assert response.status_code == 503
    assert body["failing"] == ["beat", "queue", "workers"]
    assert body["checks"]["beat"]["detail"] == "last tick 300 s ago"
    assert body["checks"]["queue"]["detail"] == "oldest queued run due 1500 s ago"


@time_machine.travel(NOW, tick=False)
def test_it_names_an_unreachable_broker_without_its_address(client) -> None:
    well()
    dead = f"redis://127.0.0.1:{free_port()}/0"
    with broker(dead):
        response = client.get("/health/")
    assert response.status_code == 503 and response.json()["failing"] == ["broker"]
    assert str(dead.split(":")[2].split("/")[0]) not in response.content.decode()
