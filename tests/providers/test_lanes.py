"""Lanes (docs/workloads.md): each API asked for a lane its own way, the lane served recorded,
a priority and a flex lane of one simulated model measured on a schedule and shown side by
side with their price multiple, and a forced downgrade flagged and kept out of the lane's
figures. Samples are written by the runner's writer thread: committed data."""

from __future__ import annotations

import csv
import html as html_module
import json
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.test import Client

from benchmarks import dispatch, runner
from benchmarks.models import Run, RunRollup, RunStatus, Schedule, Vantage, Workload
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.lanes import lane_groups
from benchmarks.selectors.leaderboard import leaderboard
from providers.base import EndpointConfig
from providers.models import Endpoint, Provider
from providers.registry import get_adapter
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options

KEY_ENV = "TOKSPEED_TEST_LANE_KEY"
MADE = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)  # when the lanes' schedule is made


@pytest.mark.parametrize(
    ("protocol", "lane", "field", "value"),
    [
        ("openai_chat", "priority", "service_tier", "priority"),
        ("openai_chat", "flex", "service_tier", "flex"),
        ("openai_responses", "priority", "service_tier", "priority"),
        ("azure_openai", "priority", "service_tier", "priority"),
        ("anthropic_messages", "priority", "service_tier", "auto"),
        ("anthropic_messages", "standard", "service_tier", None),
        ("bedrock_converse", "latency-optimized", "performanceConfig", {"latency": "optimized"}),
        ("bedrock_converse", "priority", "serviceTier", {"type": "priority"}),
        ("bedrock_converse", "flex", "serviceTier", {"type": "flex"}),
        ("bedrock_converse", "standard", "performanceConfig", None),
        ("vertex_anthropic", "priority", "service_tier", "auto"),
    ],
)
def test_it_asks_for_a_lane_its_apis_way(protocol, lane, field, value) -> None:
    config = EndpointConfig(
        base_url="https://api.example.test", protocol=protocol, model="m", lane=lane
    )
    body = get_adapter(protocol).build_request(config, prompt="Hi", max_tokens=5).json
    assert body.get(field) == value, body


@pytest.mark.django_db
def test_it_refuses_a_lane_the_protocol_cannot_ask_for() -> None:
    provider = Provider.objects.create(
        slug="g", name="G", protocol="gemini", base_url="https://g.example.test"
    )
    endpoint = Endpoint(provider=provider, slug="g-flex", model="gemini-x", lane="flex")
    with pytest.raises(ValidationError, match="gemini protocol asks for: standard"):
        endpoint.full_clean()


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", ["gemini", "vertex_gemini"])
@pytest.mark.parametrize("lane", ["priority", "flex", "latency-optimized", "batch"])
def test_it_refuses_every_lane_but_standard_on_gemini_with_a_400(protocol, lane) -> None:
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(User.objects.create_user("ada", is_staff=True))
    Provider.objects.create(slug="gg", name="GG", protocol=protocol, base_url="https://g.test")
    body = {"slug": "g-lane", "provider": "gg", "model": "gemini-x", "lane": lane}
    refused = client.post("/api/v1/endpoints/", body, format="json")
    assert refused.status_code == 400, refused.content
    assert refused.json()["lane"] == [f"The {protocol} protocol asks for: standard."]
    with pytest.raises(ValueError, match=f"no {lane} lane"):
        get_adapter(protocol).build_request(
            EndpointConfig(base_url="https://g.test", protocol=protocol, model="m", lane=lane),
            prompt="Hi",
            max_tokens=5,
        )


def lane_endpoint(
    provider: Provider, lane: str, model: str, price_in: str, price_out: str, slug: str = ""
):
    return Endpoint.objects.create(
        provider=provider,
        slug=slug or f"sim-{lane}",
        model=model,
        lane=lane,
        price_input_per_mtok=Decimal(price_in),
        price_output_per_mtok=Decimal(price_out),
    )


@pytest.mark.django_db(transaction=True)
def test_it_measures_lanes_on_a_schedule_side_by_side_and_keeps_a_downgrade_out(
    simulator, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sim-key")
    with time_machine.travel(MADE, tick=False):  # the schedule and its endpoints are made then
        schedule = lane_schedule(simulator)
    assert schedule.created_at == MADE
    # The schedule's first hourly slot after it was made (slots never predate it), ticked and
    # measured a minute into the hour; the pages read then.
    with (
        time_machine.travel(MADE + timedelta(minutes=61), tick=True),
        broker(FILESYSTEM_URL, filesystem_options(tmp_path)),
    ):
        report = dispatch.tick()
        assert report.due == 4, report
        for run in Run.objects.filter(schedule=schedule):
            assert runner.execute(run.id, worker="t") in (RunStatus.DONE, RunStatus.PARTIAL)
        measured_side_by_side(schedule)


def lane_schedule(simulator) -> Schedule:
    """A standard, a priority, a flex and a starved priority lane of one simulated model."""
    provider = Provider.objects.create(
        slug="sim-lanes",
        name="Sim lanes",
        protocol="openai_chat",
        base_url=simulator.openai_base,
        api_key_env=KEY_ENV,
        simulated=True,
    )
    model = "sim-fast+tokens=120+tps=300+ttft=100"
    standard = lane_endpoint(provider, "standard", model, "1.00", "4.00")
    priority = lane_endpoint(provider, "priority", model, "1.80", "7.20")
    flex = lane_endpoint(provider, "flex", model, "0.50", "2.00")
    # The same model with a priority quota of 0: every priority request is downgraded.
    starved = lane_endpoint(
        provider, "priority", model + "+quota=0", "1.80", "7.20", slug="sim-starved"
    )
    workload = Workload.objects.create(
        slug="lane-test", name="Lane test", max_output_tokens=200, repetitions=3
    )
    vantage = Vantage.objects.create(slug="lanes", label="Lanes", queue="lanes", is_default=True)
    schedule = Schedule.objects.create(name="Lanes", interval_minutes=60, vantage=vantage)
    schedule.workloads.set([workload])
    schedule.endpoints.set([standard, priority, flex, starved])
    Schedule.objects.exclude(pk=schedule.pk).update(enabled=False)  # the install's default
    return schedule


def measured_side_by_side(schedule: Schedule) -> None:
    """Each lane served as asked but the starved one, flagged and kept out; the board's lanes."""
    [model] = {e.model.removesuffix("+quota=0") for e in schedule.endpoints.all()}
    priority = schedule.endpoints.get(slug="sim-priority")
    starved = schedule.endpoints.get(slug="sim-starved")
    runs = {run.endpoint.slug: run for run in Run.objects.filter(schedule=schedule)}
    for slug in ("sim-standard", "sim-priority", "sim-flex"):
        served = set(runs[slug].samples.values_list("served_lane", flat=True))
        assert served == {slug.removeprefix("sim-")}, (slug, served)
        assert not runs[slug].downgraded
    starved_run = runs["sim-starved"]
    assert set(starved_run.samples.values_list("served_lane", flat=True)) == {"standard"}
    assert starved_run.downgraded and starved_run.lane == "priority"
    assert starved_run.summary["downgraded"] == {"standard": 3}
    # Kept out of the lane's figures: no rollup, no board median.
    assert not RunRollup.objects.filter(endpoint=starved).exists()
    assert RunRollup.objects.filter(endpoint=priority).exists()

    rows = leaderboard(BoardFilters(workload="lane-test", vantage="lanes", window_hours=24))
    by_slug = {row.slug: row for row in rows}
    assert by_slug["sim-starved"].runs == 0, "a downgraded run entered the priority lane's figures"
    [group] = [g for g in lane_groups(rows) if g.model == model]
    compared = {c.row.lane: c for c in group.lanes}
    base = by_slug["sim-standard"]
    fast = compared["priority"]
    assert fast.decode_multiple == pytest.approx(
        by_slug["sim-priority"].decode_tps_p50 / base.decode_tps_p50
    )
    assert fast.decode_multiple > 1.3, "the priority lane should decode faster"
    assert compared["flex"].decode_multiple < 0.8, "the flex lane should decode slower"
    assert fast.price_multiple == pytest.approx(1.8)
    assert fast.sentence == f"{fast.decode_multiple:.1f}× the decode for 1.8× the price"

    page = Client()
    page.force_login(_user())
    html = page.get("/?workload=lane-test&vantage=lanes").content.decode()
    assert 'id="lanes"' in html and fast.sentence in html
    # The speed × price page joins the lanes of the model (its chart data names them).
    price = page.get("/price/?workload=lane-test&vantage=lanes")
    links = json.loads(
        re.search(r'id="price-data"[^>]*>(.*?)</script>', price.content.decode(), re.S)[1]
    )
    assert links["lanes"] == [["sim-standard", "sim-flex", "sim-priority"]], links["lanes"]
    # The downgraded run stays on the runs list and its page, saying why the board left it out.
    shows_the_downgrade(page, runs)


def shows_the_downgrade(page: Client, runs: dict[str, Run]) -> None:
    """The runs list marks the starved run alone; its page names the lane that served it."""
    listing = page.get("/runs/?workload=lane-test").content.decode()
    starved_run = runs["sim-starved"]

    def row(run: Run) -> str:
        return listing.split(f'data-run="{run.id}"')[1].split("</tr>")[0]

    assert "served below its priority lane" in row(starved_run)
    assert "served below" not in row(runs["sim-priority"]) + row(runs["sim-flex"])
    assert (
        "Asked for the priority lane: the provider served 3 requests at standard. This run is "
        "kept out of the priority lane's figures"
    ) in html_module.unescape(page.get(f"/runs/{starved_run.id}/").content.decode())
    assert 'id="downgraded"' not in page.get(f"/runs/{runs['sim-priority'].id}/").content.decode()
    lists_the_lanes(page, runs)


def lists_the_lanes(page: Client, runs: dict[str, Run]) -> None:
    """The API's runs list, a run's detail and the runs CSV say each run's lane asked, the lane
    served and whether it was downgraded (the OpenAPI schema names the three)."""
    expected = {
        runs["sim-standard"].id: ("standard", "standard", False),
        runs["sim-priority"].id: ("priority", "priority", False),
        runs["sim-flex"].id: ("flex", "flex", False),
        runs["sim-starved"].id: ("priority", "standard", True),
    }
    listed = page.get("/api/v1/runs/?workload=lane-test").json()["results"]
    assert {r["id"]: (r["lane"], r["served_lane"], r["downgraded"]) for r in listed} == expected
    detail = page.get(f"/api/v1/runs/{runs['sim-starved'].id}/").json()
    assert (detail["lane"], detail["served_lane"], detail["downgraded"]) == expected[detail["id"]]
    export = page.get("/api/v1/export/runs.csv?workload=lane-test")
    lines = b"".join(export.streaming_content).decode().splitlines()[:-1]  # less the footer
    exported = {
        int(r["id"]): (r["lane"], r["served_lane"], r["downgraded"] == "True")
        for r in csv.DictReader(lines)
    }
    assert exported == expected
    schema = page.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for name in ("Run", "RunDetail"):
        properties = schema["components"]["schemas"][name]["properties"]
        assert {"lane", "served_lane", "downgraded"} <= set(properties), name


def _user():
    from django.contrib.auth.models import User

    return User.objects.create_user("lane-reader")


@pytest.mark.django_db
def test_it_creates_a_lane_through_the_api_and_refuses_one_the_protocol_lacks() -> None:
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(User.objects.create_user("ada", is_staff=True))
    Provider.objects.create(slug="oa", name="OA", protocol="openai_chat", base_url="https://o.test")
    Provider.objects.create(slug="gg", name="GG", protocol="gemini", base_url="https://g.test")
    for lane in ("standard", "priority"):
        body = {"slug": f"m-{lane}", "provider": "oa", "model": "m", "lane": lane}
        response = client.post("/api/v1/endpoints/", body, format="json")
        assert response.status_code == 201, response.content
    assert response.json()["label"] == "m [priority] @ OA"
    again = client.post(
        "/api/v1/endpoints/",
        {"slug": "m-priority-2", "provider": "oa", "model": "m", "lane": "priority"},
        format="json",
    )
    assert again.status_code == 400, "a second endpoint of the same model and lane"
    refused = client.post(
        "/api/v1/endpoints/",
        {"slug": "g-flex", "provider": "gg", "model": "g", "lane": "flex"},
        format="json",
    )
    assert refused.status_code == 400 and "lane" in refused.json(), refused.content


@pytest.mark.django_db(transaction=True)
def test_it_asks_bedrock_for_latency_optimized_records_it_and_keeps_a_downgrade_out(
    simulator, tmp_path, monkeypatch
) -> None:
    """Bedrock's metadata event says the performance config it used; the simulator's Bedrock
    face serves latency-optimized (faster) until a model's quota is spent, then standard."""
    monkeypatch.setenv(KEY_ENV, "sim-key")  # a Bedrock API key (bearer)
    provider = Provider.objects.create(
        slug="sim-bedrock",
        name="Sim Bedrock",
        protocol="bedrock_converse",
        base_url=simulator.base_url,
        api_key_env=KEY_ENV,
        simulated=True,
    )
    model = "sim-fast+tokens=120+tps=300+ttft=100"
    standard = lane_endpoint(provider, "standard", model, "1.00", "4.00", slug="br-standard")
    fast = lane_endpoint(provider, "latency-optimized", model, "1.25", "5.00", slug="br-fast")
    starved = lane_endpoint(
        provider, "latency-optimized", model + "+quota=1", "1.25", "5.00", slug="br-starved"
    )
    workload = Workload.objects.create(
        slug="bedrock-lanes", name="Bedrock lanes", max_output_tokens=200, repetitions=3
    )
    vantage = Vantage.objects.create(slug="br", label="Br", queue="br", is_default=True)
    slot = datetime(2026, 11, 20, 11, tzinfo=UTC)
    runs = {}
    with (
        time_machine.travel(slot + timedelta(minutes=1), tick=True),  # measured then
        broker(FILESYSTEM_URL, filesystem_options(tmp_path)),
    ):
        for endpoint in (standard, fast, starved):
            run = Run.objects.create(
                endpoint=endpoint, workload=workload, vantage=vantage, slot=slot,
                concurrency=1, repetitions=3, context_tokens=0,
            )  # fmt: skip
            assert runner.execute(run.id, worker="t") == RunStatus.DONE
            runs[endpoint.slug] = Run.objects.get(id=run.id)

    def served(slug: str) -> list[str]:
        return list(runs[slug].samples.order_by("index").values_list("served_lane", flat=True))

    assert served("br-standard") == ["standard"] * 3
    assert served("br-fast") == ["latency-optimized"] * 3
    assert not runs["br-fast"].downgraded and runs["br-fast"].lane == "latency-optimized"
    assert runs["br-fast"].decode_tps_p50 > 1.3 * runs["br-standard"].decode_tps_p50
    # Over its quota of 1, the next two requests ran (and were charged) at standard: flagged.
    starved_run = runs["br-starved"]
    assert sorted(served("br-starved")) == ["latency-optimized", "standard", "standard"]
    assert starved_run.downgraded and starved_run.summary["downgraded"] == {"standard": 2}
    # Served partly in its lane, partly below: the runs list and export say the lower one.
    assert (starved_run.served_lane, runs["br-fast"].served_lane) == ("standard", fast.lane)
    assert not RunRollup.objects.filter(endpoint=starved).exists()
    assert RunRollup.objects.filter(endpoint=fast).exists()
    with time_machine.travel(slot + timedelta(hours=1), tick=False):
        rows = leaderboard(BoardFilters(workload="bedrock-lanes", vantage="br", window_hours=24))
    by_slug = {row.slug: row for row in rows}
    assert by_slug["br-starved"].runs == 0, "a downgraded run entered the lane's figures"
    assert by_slug["br-fast"].runs == 1
