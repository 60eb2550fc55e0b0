"""The leaderboard by model, its blended price and money formats, the providers not measured
yet, and the CSV download from the page and the API."""

import csv
import io
import re

import pytest
from django.contrib.auth.models import User

from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from dashboard.templatetags.dashboard_format import usd_small
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db


@pytest.fixture
def user_client(client):
    data.default_workloads()
    data.vantage()
    client.force_login(User.objects.create_user("ana"))
    return client


@pytest.fixture
def llama():
    """Llama 3.3 70B at two providers and through a router, plus another model."""
    slot = data.recent_slots(1)[0]
    made = {}
    for slug, provider, name, tps, price_in, price_out in [
        ("groq-llama", "groq", "Llama 3.3 70B", 300.0, 0.59, 0.79),
        ("cerebras-llama", "cerebras", "Llama 3.3 70B", 900.0, 0.85, 1.20),
        ("router-llama", "router", "Llama 3.3 70B via OpenRouter", 120.0, 0.13, 0.40),
        ("gpt", "openai", "GPT-4o mini", 80.0, 0.15, 0.60),
    ]:
        ep = data.endpoint(
            data.provider(provider), slug, display_name=name, price_in=price_in,
            price_out=price_out,
        )  # fmt: skip
        data.run(ep, slot, decode_tps=tps)
        made[slug] = ep
    return made


def rows_of(html: str) -> list[str]:
    return re.findall(r'<tr data-slug="([^"]+)"', html)


def test_it_filters_the_board_to_one_model_at_every_provider(user_client, llama):
    html = user_client.get("/", {"model": "Llama 3.3 70B"}).content.decode()
    assert rows_of(html) == ["cerebras-llama", "groq-llama", "router-llama"]  # by decode speed
    assert '<option value="Llama 3.3 70B" selected>Llama 3.3 70B (3)</option>' in html

    bad = user_client.get("/", {"model": "Llama 9"})
    assert bad.status_code == 400 and "no endpoint serves" in bad.content.decode()


def test_it_filters_by_model_id_and_groups_an_unnamed_endpoint_with_its_model(user_client, llama):
    """`?model=` takes the id a row shows in `model`; a custom endpoint serving that id with no
    display name joins the named endpoints' group instead of forming its own."""
    slot = data.recent_slots(1)[0]
    model_id = llama["groq-llama"].model
    custom = data.endpoint(
        data.provider("my-vllm"), "my-vllm-llama", model=model_id, display_name=""
    )
    data.run(custom, slot, decode_tps=200.0)

    api = user_client.get("/api/v1/leaderboard/", {"model": model_id})
    assert api.status_code == 200, f"model id {model_id!r} refused: {api.content[:200]}"
    slugs = {row["slug"] for row in api.json()["rows"]}
    assert {"groq-llama", "my-vllm-llama"} <= slugs and "gpt" not in slugs, slugs
    families = {row["slug"]: row["model_family"] for row in api.json()["rows"]}
    assert families["my-vllm-llama"] == families["groq-llama"], families

    html = user_client.get("/", {"group": "model"}).content.decode()
    groups = re.findall(r'<tbody data-model="([^"]+)"', html)
    assert model_id not in groups, f"the custom endpoint formed its own group: {groups}"


def test_it_groups_rows_by_model_best_group_first(user_client, llama):
    html = user_client.get("/", {"group": "model"}).content.decode()
    groups = re.findall(r'<tbody data-model="([^"]+)"', html)
    assert groups == ["Llama 3.3 70B", "GPT-4o mini"]
    assert 'Llama 3.3 70B <span class="muted">· 3 endpoints</span>' in html
    # The sort links keep the grouping.
    assert re.search(r'href="\?[^"]*group=model[^"]*sort=ttft"', html)


def test_it_shows_the_blended_price_beside_in_and_out(user_client, llama):
    html = user_client.get("/").content.decode()
    row = html.split('data-slug="groq-llama"', 1)[1].split("</tr>", 1)[0]
    [board_row] = [r for r in leaderboard(BoardFilters()) if r.slug == "groq-llama"]
    expected = (3 * board_row.price_in_per_mtok + board_row.price_out_per_mtok) / 4
    assert "$0.59 / $0.79" in row
    assert f'<td class="num c-blended" data-label="Blended 3:1 per 1M">${expected:.2f}</td>' in row


@pytest.mark.parametrize(
    ("value", "written"),
    [(0.000256, "$0.000256"), (0.0312, "$0.0312"), (0.00000123, "$0.00000123"), (2.5, "$2.50")],
)
def test_it_writes_a_cost_as_money_never_in_exponent_notation(value, written):
    assert usd_small(value) == written


def test_it_lists_providers_not_measured_yet_with_the_variable_that_enables_them(
    user_client, llama, monkeypatch
):
    monkeypatch.delenv("TOKSPEED_TEST_MISTRAL_KEY", raising=False)
    off = data.provider("mistral", enabled=False, api_key_env="TOKSPEED_TEST_MISTRAL_KEY")
    data.endpoint(off, "mistral-large")
    html = user_client.get("/").content.decode()
    section = html.split('id="not-measured"', 1)[1].split("</section>", 1)[0]
    assert "<strong>Mistral</strong>" in section
    assert "set <code>TOKSPEED_TEST_MISTRAL_KEY</code>" in section
    assert "mistral-large" not in rows_of(html)


def test_it_downloads_the_board_as_csv_from_the_page_and_the_api(user_client, llama):
    html = user_client.get("/", {"model": "Llama 3.3 70B", "window": "24h"}).content.decode()
    link = re.search(r'<a href="([^"]+)" download>Download CSV</a>', html).group(1)
    assert link.startswith("/api/v1/export/leaderboard.csv?")

    response = user_client.get(link.replace("&amp;", "&"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [row["slug"] for row in table] == ["cerebras-llama", "groq-llama", "router-llama"]
    assert {row["model_family"] for row in table} == {"Llama 3.3 70B"}
    assert float(table[0]["blended_price_per_mtok"]) == pytest.approx((3 * 0.85 + 1.20) / 4)

    api = user_client.get("/api/v1/leaderboard/", {"model": "GPT-4o mini"}).json()
    assert [row["slug"] for row in api["rows"]] == ["gpt"]


def test_it_lists_every_api_resource_at_the_root(user_client):
    root = user_client.get("/api/v1/", HTTP_ACCEPT="application/json").json()
    expected = ["leaderboard", "leaderboard_csv", "agent_loop", "endpoints", "runs", "alerts"]
    expected += ["runs_csv", "samples_csv", "endpoint_history", "endpoint_test", "schema"]
    assert set(expected) <= set(root)
    for name, item in root.items():
        if "{" not in item["url"]:
            assert user_client.get(item["url"]).status_code == 200, name


def test_it_prices_an_agent_loop_beside_its_wall_time(user_client, llama):
    html = user_client.get("/agent-loop/", {"calls": 10, "tokens_per_call": 500}).content.decode()
    row = html.split('data-slug="groq-llama"', 1)[1].split("</tr>", 1)[0]
    [board_row] = [r for r in leaderboard(BoardFilters()) if r.slug == "groq-llama"]
    per_call = board_row.input_tokens * 0.59 + 500 * 0.79
    assert f"{usd_small(10 * per_call / 1_000_000)}<span" in row
    assert "100 in + 500 out per call" in row


def test_it_groups_the_compare_picker_by_model_and_says_why_a_row_is_missing(
    user_client, llama, monkeypatch
):
    monkeypatch.delenv("TOKSPEED_TEST_SAMBA_KEY", raising=False)
    off = data.provider("samba", enabled=False, api_key_env="TOKSPEED_TEST_SAMBA_KEY")
    data.endpoint(off, "samba-llama", display_name="Llama 3.3 70B")
    quiet = data.endpoint(data.provider("quiet"), "quiet-gpt", display_name="GPT-4o mini")

    html = user_client.get(
        "/compare/", [("e", "groq-llama"), ("e", "samba-llama"), ("e", quiet.slug)]
    ).content.decode()
    groups = re.findall(r'<fieldset class="picker-group" data-model="([^"]+)"', html)
    assert groups[:2] == ["Llama 3.3 70B", "GPT-4o mini"]  # most providers first
    llama_group = html.split('data-model="Llama 3.3 70B"', 1)[1].split("</fieldset>", 1)[0]
    assert llama_group.count("<label") == 4 and "not measured" in llama_group
    assert 'id="picker-search"' in html

    missing = html.split('id="compare-missing"', 1)[1].split("</ul>", 1)[0]
    assert "Llama 3.3 70B @ Samba</strong> has no row" in missing
    assert "<code>TOKSPEED_TEST_SAMBA_KEY</code> is not set" in missing
    assert "GPT-4o mini @ Quiet</strong> has no row: no finished run in the last 72h" in missing
    assert rows_of(html.split('id="compare-table"', 1)[1])[:1] == ["groq-llama"]
