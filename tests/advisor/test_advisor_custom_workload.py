"""Advice on a custom workload (docs/advisor.md, "A custom workload"): ranked by the workload's
own runs, its basis said, unmeasured endpoints offered a run of it, and only for members who
may read its prompts. Real PostgreSQL (the digest path), the API and the page, pinned time."""

import pytest
import time_machine
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from advisor.advice import advise
from advisor.missing import missing_runs
from advisor.shape import Shape
from benchmarks.models import Run
from tests import custom_advice_data as world_data
from tests import custom_workload_data as text
from tests.advisor_data import NOW

pytest_plugins = ["tests.api_fixtures"]
pytestmark = pytest.mark.django_db

OUTPUT_TOKENS = 500  # the profiles' output tokens per call (custom_advice_data.world)


@pytest.fixture(autouse=True)
def pinned():
    cache.clear()
    with time_machine.travel(NOW, tick=False):
        yield
    cache.clear()


@pytest.fixture
def world():
    return world_data.world()


@pytest.fixture
def member():
    client = APIClient()
    client.force_authenticate(world_data.prompt_reader())
    return client


def task_s(slug: str) -> float:
    """One call: the workload's measured TTFT + the profile's output at its measured decode."""
    ttft_ms, decode_tps, _ = world_data.ON_WORKLOAD[slug]
    return ttft_ms / 1000 + OUTPUT_TOKENS / decode_tps


def cost(slug: str) -> float:
    """Priced at the input tokens the provider counted on the workload, not the profile's 200."""
    price_in, price_out = world_data.PRICES[slug]
    return (world_data.ON_WORKLOAD[slug][2] * price_in + OUTPUT_TOKENS * price_out) / 1e6


def test_it_ranks_endpoints_by_the_workloads_own_runs_and_says_its_basis(member, world):
    response = member.get("/api/v1/advice/", {"profile": "support"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert [r["endpoint"] for r in body["results"]] == ["quick", "steady"]
    quick, steady = body["results"]
    assert quick["task_p50_s"] == pytest.approx(task_s("quick"))
    assert steady["task_p90_s"] == pytest.approx(task_s("steady"))
    assert quick["input_tokens"] == world_data.ON_WORKLOAD["quick"][2]
    assert quick["cost_per_task"] == pytest.approx(cost("quick"), rel=1e-4)
    assert body["recommended"] == "quick" and not steady["inside_budget"]
    assert body["basis"]["measured_on"] == "Support agent"
    assert body["workload"]["slug"] == "support-agent"
    assert body["workload"]["shape"]["prompts"] == 12 and body["workload"]["shape"]["tools"] == 6
    assert body["not_measured"] == [
        {"endpoint": "unrun", "label": "Unrun @ Unrunco", "missing": ["workload"]}
    ]
    assert text.TEXT_MARK not in response.content.decode(), "the workload's text is in the advice"


def test_the_standard_advice_reads_the_standard_workloads_only(member, world):
    """The same shape without the workload ranks by the standard prompt: the other way round,
    every endpoint measured, and no custom run counted among its runs."""
    body = member.get("/api/v1/advice/", {"profile": "chat"}).json()
    assert [r["endpoint"] for r in body["results"]] == ["steady", "unrun", "quick"]
    assert "workload" not in body and "measured_on" not in body["basis"]
    assert all("input_tokens" not in r for r in body["results"])
    assert {r["runs"] for r in body["results"]} == {8}, "a custom run counted as a base run"


def test_an_ad_hoc_question_names_the_workload(member, world):
    body = member.get(
        "/api/v1/advice/", {"workload": "support-agent", "models": world_data.MODEL}
    ).json()
    assert body["profile"] is None and body["basis"]["measured_on"] == "Support agent"
    assert [r["endpoint"] for r in body["results"]] == ["quick", "steady"]


def test_an_endpoint_without_runs_of_it_is_not_measured_and_offered_one(world):
    advice = advise(Shape.of(world["support"]), profile=world["support"])
    assert [o.slug for o in advice.unmeasured] == ["unrun"]
    plan = missing_runs(advice)
    assert [(o.slug, w.slug) for o, w in plan] == [("unrun", "support-agent")]
    assert advice.reason.startswith("Quick @ Quickco: p90 task")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"workload": "base"}, "name a custom workload"),
        ({"workload": "nope"}, "no workload 'nope'"),
        ({"workload": "bad slug!"}, "no workload"),
    ],
)
def test_a_bad_workload_is_a_400_naming_it(member, world, query, message):
    response = member.get("/api/v1/advice/", query)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_reader_without_the_role_gets_a_403_not_the_advice(reader, anon, public, world):
    for client in (reader, anon):
        for query in ({"profile": "support"}, {"workload": "support-agent"}):
            response = client.get("/api/v1/advice/", query)
            assert response.status_code == 403, (client, query, response.content)
            assert "quick" not in response.content.decode()
    assert reader.get("/api/v1/advice/", {"profile": "chat"}).status_code == 200


def test_the_page_answers_members_and_refuses_others(world, plain_user, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = False
    browser = Client()
    browser.force_login(world_data.prompt_reader())
    page = browser.get("/advisor/support/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "Measured on <strong>Support agent</strong>" in html
    assert html.index('data-slug="quick"') < html.index('data-slug="steady"')
    assert "Unrun @ Unrunco: no run of Support agent in the last 14 days" in html
    assert text.TEXT_MARK not in html
    assert 'data-profile="support"' in browser.get("/advisor/").content.decode()

    other = Client()
    other.force_login(plain_user)
    refused = other.get("/advisor/support/")
    assert refused.status_code == 403 and "quick" not in refused.content.decode()
    index = other.get("/advisor/").content.decode()
    assert 'data-profile="support"' not in index and 'data-profile="chat"' in index
    staff = Client()
    staff.force_login(User.objects.create_user("ops", is_staff=True))
    assert staff.post("/advisor/support/measure/").status_code == 403
    assert not Run.objects.filter(workload=world["workload"], endpoint=world["unrun"]).exists()


def test_staff_with_the_role_queue_a_run_of_the_workload_where_it_is_missing(world):
    staff = Client()
    staff.force_login(world_data.prompt_reader("ops-reader", is_staff=True))
    assert 'id="measure-missing"' in staff.get("/advisor/support/").content.decode()
    response = staff.post("/advisor/support/measure/", follow=True)
    assert "Queued 1 run: " in response.content.decode()
    queued = Run.objects.filter(workload=world["workload"], endpoint=world["unrun"])
    assert queued.count() == 1 and queued.get().origin == "on_demand"
