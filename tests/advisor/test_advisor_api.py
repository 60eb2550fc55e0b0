"""/api/v1/advice/ and its router feeds, against seeded runs with hand-checkable figures."""

import json
import os

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks.models import Run, RunStatus
from tests import advisor_data as seed
from tests import dashboard_data as data

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("at_seed_now")]


def test_it_ranks_the_profiles_endpoints_with_task_times_and_costs(reader, world):
    response = reader.get("/api/v1/advice/", {"profile": "chat"})
    assert response.status_code == 200
    body = response.json()
    slugs = [r["endpoint"] for r in body["results"]]
    assert slugs == ["fast", "lonely", "cheap"]  # "unrelated" serves another model
    fast = body["results"][0]
    # 0.3 s TTFT + 500 tokens ÷ 250 tok/s = 2.3 s, no spread.
    assert fast["task_p50_s"] == pytest.approx(2.3)
    assert fast["task_p90_s"] == pytest.approx(2.3)
    assert fast["cost_per_task"] == pytest.approx((200 * 0.6 + 500 * 0.8) / 1e6)
    assert fast["availability"] == 1.0
    assert fast["verdict"] == "holds attention"
    assert body["recommended"] == "fast"
    assert body["reason"].startswith("Fast @ Fastco: ")
    assert "p90 task 2.3 s, inside the 10 s budget" in body["reason"]
    cheap = body["results"][2]
    assert cheap["task_p50_s"] == pytest.approx(0.9 + 500 / 60)
    saved = body["savings"]
    assert saved["seconds_per_task"] == pytest.approx(cheap["task_p50_s"] - 2.3)
    expected_usd = (cheap["cost_per_task"] - fast["cost_per_task"]) * 1000
    assert saved["usd_per_1000_tasks"] == pytest.approx(expected_usd)
    thin = [w for w in body["warnings"] if w.startswith("Thin data")]
    assert len(thin) == 1 and "1 of 3 ranked endpoints" in thin[0], body["warnings"]
    assert "Lonely" not in thin[0], "the thin-data warning names endpoints instead of counting"
    assert [r["endpoint"] for r in body["results"] if r["thin"]] == ["lonely"], "row not marked"


def test_it_answers_ad_hoc_parameters_without_a_profile(reader, world):
    response = reader.get(
        "/api/v1/advice/",
        {"input_tokens": 200, "output_tokens": 1000, "calls": 3, "tool_s": 1, "budget_s": 10,
         "models": "llama-3.3-70b", "max_cost": "0.01"},
    )  # fmt: skip
    body = response.json()
    assert response.status_code == 200 and body["profile"] is None
    fast = next(r for r in body["results"] if r["endpoint"] == "fast")
    # 3 × (0.3 + 1000 / 250 + 1) = 15.9 s: over the 10 s budget.
    assert fast["task_p90_s"] == pytest.approx(15.9)
    assert not fast["inside_budget"]
    assert body["reason"].startswith("Nothing meets the 10 s budget")


def test_it_lists_endpoints_not_measured_for_the_shape(reader, world):
    body = reader.get("/api/v1/advice/", {"profile": "chat", "input_tokens": 30_000}).json()
    assert {e["endpoint"] for e in body["not_measured"]} == {"fast", "cheap", "lonely"}
    assert all(e["missing"] == ["long-context"] for e in body["not_measured"])
    assert body["results"] == [] and body["recommended"] is None


def test_it_sends_an_etag_and_answers_304_when_unchanged(reader, world):
    first = reader.get("/api/v1/advice/", {"profile": "chat"})
    assert first["Cache-Control"] == "max-age=60, private"
    again = reader.get("/api/v1/advice/", {"profile": "chat"}, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    # A finished run changes the data, hence the answer and its tag.
    fast = Run.objects.filter(endpoint__slug="fast").first().endpoint
    seed.finished(seed.data.run(fast, seed.NOW.replace(hour=11), ttft_ms=5000, decode_tps=10,
                                summary=seed.summary(ttft_ms=5000, decode_tps=10)))  # fmt: skip
    changed = reader.get("/api/v1/advice/", {"profile": "chat"}, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]


@pytest.mark.parametrize(
    ("query", "field"),
    [({"profile": "nope"}, "profile"), ({"calls": "0"}, "calls"), ({"budget_s": "nan"}, "budget_s"),
     ({"input_tokens": "1e9"}, "input_tokens"), ({"format": "yaml"}, "format"),
     ({"current": "no-such"}, "current"), ({"models": "a\x00b"}, "models"),
     ({"bogus": "1"}, "bogus")],
)  # fmt: skip
def test_it_answers_bad_parameters_with_a_400_naming_them(reader, world, query, field):
    response = reader.get("/api/v1/advice/", query)
    assert response.status_code == 400
    assert field in json.dumps(response.json())


def test_it_serves_a_plain_ordered_list_and_an_openrouter_preference(reader, world):
    plain = reader.get("/api/v1/advice/", {"profile": "chat", "format": "list"}).json()
    assert plain == ["fast", "lonely", "cheap"]
    openrouter = reader.get("/api/v1/advice/", {"profile": "chat", "format": "openrouter"}).json()
    # Three made-up providers: OpenRouter knows none of them, and the feed says so.
    assert openrouter["provider"] == {"order": [], "allow_fallbacks": True}
    assert openrouter["models"] == []
    assert [u["endpoint"] for u in openrouter["unmapped"]] == ["fast", "lonely", "cheap"]
    assert "provider 'fastco'" in openrouter["unmapped"][0]["reason"]


def test_it_names_openrouters_models_and_providers_in_the_openrouter_feed(reader, world):
    profile = world[0]
    base = data.workload("base")
    endpoints = [  # (provider slug, endpoint slug, model id, display name, TTFT ms)
        ("aws-bedrock", "bedrock-llama", "us.meta.llama3-3-70b-instruct-v1:0",
         "Llama 3.3 70B on Bedrock", 150),
        ("groq", "groq-llama", "llama-3.3-70b-versatile", "Llama 3.3 70B", 200),
        ("vertex-gemini", "vertex-flash", "gemini-2.5-flash", "Gemini 2.5 Flash on Vertex AI", 220),
        ("gemini", "studio-flash", "gemini-2.5-flash", "Gemini 2.5 Flash", 230),
        ("azure-openai", "azure-mini", "gpt-4o-mini",
         "GPT-4o mini on Azure (deployment gpt-4o-mini)", 240),
        ("openai-responses", "oai-gpt5", "gpt-5", "GPT-5", 250),
        ("simcloud", "sim-llama", "sim-fast", "Llama 3.3 70B (simulated)", 100),
    ]  # fmt: skip
    for provider_slug, slug, model, name, ttft in endpoints:
        prov = data.provider(provider_slug, simulated=provider_slug == "simcloud")
        ep = data.endpoint(prov, slug, model=model, display_name=name)
        seed.measured(ep, ttft_ms=ttft, decode_tps=250, wl=base)
        profile.endpoints.add(ep)
    seed.rebuild(now=seed.NOW)
    feed = reader.get("/api/v1/advice/", {"profile": "chat", "format": "openrouter"}).json()
    assert feed["provider"]["order"] == [
        "amazon-bedrock", "groq", "google-vertex", "google-ai-studio", "azure", "openai"
    ], feed  # fmt: skip
    assert feed["models"] == [
        "meta-llama/llama-3.3-70b-instruct", "google/gemini-2.5-flash", "openai/gpt-4o-mini",
        "openai/gpt-5",
    ], feed  # fmt: skip
    unmapped = {u["endpoint"]: u["reason"] for u in feed["unmapped"]}
    assert "simulated" in unmapped["sim-llama"], unmapped
    assert "fast" in unmapped and "bedrock-llama" not in unmapped, unmapped


def test_it_serves_a_litellm_model_list_that_litellm_router_loads(reader, world):
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import
    litellm = pytest.importorskip("litellm")
    feed = reader.get("/api/v1/advice/", {"profile": "chat", "format": "litellm"}).json()
    router = litellm.Router(model_list=feed["model_list"])
    deployments = router.get_model_list()
    assert [d["model_info"]["id"] for d in deployments] == ["fast", "lonely", "cheap"]
    assert [d["litellm_params"]["order"] for d in deployments] == [1, 2, 3]
    assert {d["model_name"] for d in deployments} == {"tokspeed-chat"}
    fast = deployments[0]["litellm_params"]
    assert fast["model"] == "openai/llama-3.3-70b"
    assert fast["api_base"] == "https://fastco.example.com/v1"
    assert fast["input_cost_per_token"] == pytest.approx(0.6 / 1e6)
    assert fast["output_cost_per_token"] == pytest.approx(0.8 / 1e6)


def test_it_queues_exactly_the_missing_runs_for_staff(client, django_user_model, world, settings):
    profile, fast, cheap, lonely = world
    profile.concurrency = 10
    profile.save()
    staff = django_user_model.objects.create_user("ada", is_staff=True)
    client.force_login(staff)
    before = Run.objects.count()
    response = client.post("/advisor/chat/measure/")
    assert response.status_code == 302
    queued = Run.objects.filter(status=RunStatus.QUEUED).select_related("endpoint", "workload")
    assert Run.objects.count() - before == 3
    assert {(r.endpoint.slug, r.workload.slug) for r in queued} == {
        ("fast", "parallel-10"),
        ("cheap", "parallel-10"),
        ("lonely", "parallel-10"),
    }


def test_it_queues_only_runs_that_can_run_and_says_what_it_left_out(
    client, django_user_model, world, monkeypatch
):
    """An endpoint without its key, or disabled, would fail at once or sit queued for ever."""
    profile, fast, cheap, lonely = world
    profile.concurrency = 10
    profile.save()
    fast.provider.api_key_env = "TOKSPEED_TEST_UNSET_FASTCO_KEY"
    fast.provider.save()
    monkeypatch.delenv("TOKSPEED_TEST_UNSET_FASTCO_KEY", raising=False)
    lonely.provider.enabled = False
    lonely.provider.save()
    client.force_login(django_user_model.objects.create_user("ada", is_staff=True))
    page = client.get("/advisor/chat/").content.decode()
    assert "Queue the 1 missing run<" in page, "the button counts runs that cannot run"
    assert 'id="missing-left-out"' in page, "the page does not say what the button leaves out"

    response = client.post("/advisor/chat/measure/", follow=True)

    queued = Run.objects.filter(status=RunStatus.QUEUED).select_related("endpoint")
    assert {r.endpoint.slug for r in queued} == {"cheap"}, "runs went to endpoints that can't run"
    said = [str(m) for m in response.context["messages"]]
    left_out = next((m for m in said if m.startswith("Left out 2 endpoints")), None)
    assert left_out, f"the page did not say what was left out: {said}"
    assert f"{fast.label} (its provider's key variable is not set)" in left_out, left_out
    assert f"{lonely.label} (its provider is disabled in the admin)" in left_out, left_out


def test_it_refuses_the_measure_action_to_non_staff(client, django_user_model, world):
    client.force_login(django_user_model.objects.create_user("bob"))
    before = Run.objects.count()
    response = client.post("/advisor/chat/measure/")
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert Run.objects.count() == before


def test_it_shows_the_profiles_answer_on_the_page(client, django_user_model, world):
    client.force_login(django_user_model.objects.create_user("bob"))
    html = client.get("/advisor/chat/").content.decode()
    assert "p90 task 2.3 s, inside the 10 s budget" in html
    assert "Switching from" in html and "Thin data" in html
    index = client.get("/advisor/").content.decode()
    assert 'data-profile="chat"' in index and 'data-profile="rag-30k"' in index


def test_it_says_thin_data_once_under_the_table_and_marks_the_rows(
    client, django_user_model, world
):
    client.force_login(django_user_model.objects.create_user("bob"))
    index = client.get("/advisor/").content.decode()
    row = index.split('data-profile="chat"', 1)[1].split("</tr>", 1)[0]
    assert "thin data: 1 of 3" in row, "the profile's row is not marked"
    assert "Thin data" not in row and 'class="error"' not in row, (
        "the row repeats the warning in red"
    )
    marked = index.count('<span class="badge thin"')
    note = f"Thin data in {marked} answer{'s' if marked != 1 else ''} (marked)"
    assert index.count("Thin data") == 1 and note in index, "the warning is not said once"


def test_it_answers_in_the_same_number_of_queries_however_many_endpoints(reader, world):
    """Candidates are read with only the columns an option shows (advice.candidates): any
    other column read per endpoint would cost a query each."""
    with CaptureQueriesContext(connection) as few:
        first = reader.get("/api/v1/advice/", {"input_tokens": 200, "output_tokens": 1000})
    for index in range(5):
        data.endpoint(data.provider(f"more-{index}"), f"more-{index}", display_name="More")
    with CaptureQueriesContext(connection) as many:
        body = reader.get("/api/v1/advice/", {"input_tokens": 201, "output_tokens": 1000}).json()
    assert first.status_code == 200
    assert len(many.captured_queries) == len(few.captured_queries)
    unmeasured = {row["endpoint"]: row["label"] for row in body["not_measured"]}
    assert {f"more-{index}": f"More @ More {index}" for index in range(5)}.items() <= (
        unmeasured.items()
    )
    assert body["results"] and all(row["provider"] for row in body["results"])
