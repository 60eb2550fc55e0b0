"""Lanes in the advice (docs/advisor.md, "Lanes"): each lane of a model ranked as a candidate of
its own, the sentence saying whether the fast lane pays for itself in the workload's budget (both
ways, in the API and on the page), and a downgraded run kept out of the lane's figures."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client

from advisor.advice import advise
from advisor.digest import load_digest, rebuild
from advisor.measures import load_points
from advisor.models import WorkloadProfile
from advisor.shape import Shape
from benchmarks.models import Run
from tests import advisor_data as seed

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("at_seed_now")]
MODEL = "llama-3.3-70b"
HOUR = timedelta(hours=1)


def lanes_world():
    """seed.world, plus a standard and a priority lane of the model at one more provider: the
    standard lane 0.6 s TTFT and 100 tok/s (5.6 s a chat task), the priority lane 0.3 s and
    250 tok/s (2.3 s) at twice the prices."""
    profile, *_ = seed.world()
    laneco = seed.data.provider("laneco")
    named = {"model": MODEL, "display_name": "Llama 3.3 70B"}
    standard = seed.data.endpoint(laneco, "lane-standard", price_in=0.6, price_out=0.8, **named)
    priority = seed.data.endpoint(
        laneco, "lane-priority", lane="priority", price_in=1.2, price_out=1.6, **named
    )
    seed.measured(standard, ttft_ms=600, decode_tps=100)
    seed.measured(priority, ttft_ms=300, decode_tps=250)
    rebuild(now=seed.NOW)
    return profile, standard, priority


# 200 input + 500 output tokens: 520 µ$ a task on the standard lane, 1,040 µ$ on priority.
EXTRA_PER_1000 = (200 * 0.6 + 500 * 0.8) / 1e6 * 1000
SAVED_P50 = (0.6 + 500 / 100) - (0.3 + 500 / 250)


def lanes_of(body: dict) -> dict:
    [verdict] = [v for v in body["lanes"] if v["endpoint"] == "lane-priority"]
    return verdict


def test_it_ranks_each_lane_of_a_model_as_a_candidate_of_its_own(reader):
    lanes_world()
    body = reader.get("/api/v1/advice/", {"profile": "chat"}).json()
    rows = {r["endpoint"]: r for r in body["results"]}
    assert rows["lane-standard"]["lane"] == "standard"
    assert rows["lane-priority"]["lane"] == "priority"
    assert rows["lane-priority"]["label"] == "Llama 3.3 70B [priority] @ Laneco"
    assert rows["lane-priority"]["task_p50_s"] == pytest.approx(2.3)
    assert rows["lane-standard"]["task_p50_s"] == pytest.approx(5.6)
    # Each lane is priced at its own prices.
    assert rows["lane-priority"]["cost_per_task"] == pytest.approx(
        2 * rows["lane-standard"]["cost_per_task"]
    )
    order = [r["endpoint"] for r in body["results"]]
    assert order.index("lane-priority") < order.index("lane-standard")


def test_it_says_the_fast_lane_does_not_pay_when_the_standard_lane_meets_the_budget(reader):
    lanes_world()  # the chat profile's budget is 10 s: the standard lane's 5.6 s meets it
    body = reader.get("/api/v1/advice/", {"profile": "chat"}).json()
    verdict = lanes_of(body)
    assert verdict["pays"] is False and verdict["standard_endpoint"] == "lane-standard"
    assert verdict["seconds_saved_p50"] == pytest.approx(SAVED_P50)
    assert verdict["usd_per_1000_tasks"] == pytest.approx(EXTRA_PER_1000)
    hourly = EXTRA_PER_1000 / 1000 / SAVED_P50 * 3600
    assert verdict["break_even_usd_per_hour"] == pytest.approx(hourly)
    assert verdict["text"] == (
        "The priority lane of Llama 3.3 70B at Laneco does not pay for itself: it saves 3.3 s "
        "per task (p50) for $0.52 more per 1,000 tasks (worth it on time alone above $0.57 an "
        "hour); the standard lane already meets the 10 s budget (p90 5.6 s), so the time saved "
        "is not needed."
    )


def test_it_says_the_fast_lane_pays_for_itself_when_only_it_meets_the_budget(reader):
    profile, *_ = lanes_world()
    profile.budget_s = 4
    profile.save()
    body = reader.get("/api/v1/advice/", {"profile": "chat"}).json()
    verdict = lanes_of(body)
    assert verdict["pays"] is True
    assert verdict["text"].startswith(
        "The priority lane of Llama 3.3 70B at Laneco pays for itself: it saves 3.3 s per task"
    )
    assert verdict["text"].endswith(
        "only the priority lane meets the 4.0 s budget (p90 2.3 s against 5.6 s)."
    )
    # The page says the same, in its Lanes section.
    client = Client()
    client.force_login(User.objects.create_user("lane-page"))
    html = client.get("/advisor/chat/").content.decode()
    assert 'id="lanes"' in html and 'class="pays"' in html
    assert "only the priority lane meets the 4.0 s budget" in html


def test_it_says_the_fast_lane_does_not_pay_over_the_price_ceiling(reader):
    lanes_world()
    query = {"models": MODEL, "input_tokens": 200, "output_tokens": 500, "budget_s": 4,
             "max_cost": "0.0008"}  # priority costs 0.00104 a task  # fmt: skip
    verdict = lanes_of(reader.get("/api/v1/advice/", query).json())
    assert verdict["pays"] is False
    assert verdict["text"].endswith("it is over the $0.0008 price ceiling per task.")


def test_it_keeps_a_downgraded_run_out_of_the_lanes_advice_on_both_paths():
    _, _, priority = lanes_world()
    # Runs of the priority lane served at standard (much slower): flagged by their finish.
    slow = seed.measured(priority, ttft_ms=5000, decode_tps=10, count=4, now=seed.NOW - HOUR)
    Run.objects.filter(id__in=[r.id for r in slow]).update(lane="priority", downgraded=True)
    rebuild(now=seed.NOW)
    shape = Shape(input_tokens=200, output_tokens=500, models=(MODEL,))
    for load in (None, load_digest, load_points):  # None: the digest stacked (the default)
        name = getattr(load, "__name__", "load_stacked")
        answer = advise(shape, now=seed.NOW, load=load).as_dict()
        row = next(r for r in answer["results"] if r["endpoint"] == "lane-priority")
        assert row["runs"] == 8, f"{name}: a downgraded run entered the lane's figures"
        assert row["task_p50_s"] == pytest.approx(2.3), name


def test_it_shows_no_lane_sentence_without_a_measured_standard_lane(reader):
    profile, standard, _ = lanes_world()
    Run.objects.filter(endpoint=standard).delete()
    rebuild(now=seed.NOW)
    WorkloadProfile.objects.filter(pk=profile.pk).update(budget_s=4)
    body = reader.get("/api/v1/advice/", {"profile": "chat"}).json()
    assert "lane-priority" in [r["endpoint"] for r in body["results"]]
    assert body["lanes"] == []
