"""Every surface tells the same run the same cost and task time.

One endpoint, measured without spread at an odd price (USD 0.15 in / 0.60 out per 1M tokens),
and one task (20 calls × 1,234 tokens in × 800 out): the agent-loop page and its API, the
advisor's page and API, the leaderboard page, its API and its CSV export, and the run and sample
exports agree to the cent and to the millisecond, because each calls benchmarks.money and
benchmarks.task_time.
"""

import csv
import io
import json
import re

import pytest
import time_machine
from django.contrib.auth.models import User
from django.core.cache import cache

from advisor.digest import rebuild
from advisor.models import WorkloadProfile
from dashboard.templatetags.dashboard_format import seconds, usd_small
from tests import advisor_data as seed
from tests import dashboard_data as data
from tests.api_factories import make_sample

pytest_plugins = ["tests.api_fixtures"]
pytestmark = pytest.mark.django_db

CALLS, INPUT, OUTPUT = 20, 1234, 800
TASK = {"calls": CALLS, "tokens_per_call": OUTPUT}
ADHOC = {"input_tokens": INPUT, "output_tokens": OUTPUT, "calls": CALLS}


@pytest.fixture(autouse=True)
def pinned():
    cache.clear()
    with time_machine.travel(seed.NOW, tick=False):
        yield
    cache.clear()


@pytest.fixture
def measured():
    data.default_workloads()
    data.vantage()
    endpoint = data.endpoint(data.provider("oddco"), "odd", price_in=0.15, price_out=0.60)
    seed.measured(
        endpoint, ttft_ms=345, decode_tps=87, input_tokens=INPUT, output_tokens=OUTPUT, count=8
    )
    for run in endpoint.runs.all():  # seed.measured gives the first run only its own count
        run.input_tokens = INPUT
        run.save(update_fields=["input_tokens"])
    WorkloadProfile.objects.create(
        slug="loop", name="Loop", input_tokens=INPUT, output_tokens=OUTPUT, calls=CALLS
    )
    rebuild(now=seed.NOW)
    return endpoint


@pytest.fixture
def page_client(client):
    client.force_login(User.objects.create_user("ana"))
    return client


def cents(usd: float) -> int:
    return round(usd * 100)


def page_data(html: str, element_id: str) -> object:
    found = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html)
    assert found, f"the page embeds no #{element_id} data"
    return json.loads(found.group(1))


def row_html(html: str, table_id: str, slug: str) -> str:
    table = html.split(f'id="{table_id}"', 1)[1]
    return table.split(f'data-slug="{slug}"', 1)[1].split("</tr>", 1)[0]


def csv_rows(reader, path: str) -> list[dict[str, str]]:
    text = reader.get(path).getvalue().decode()
    return list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))


def test_it_tells_the_same_cost_per_request_in_the_run_and_sample_exports(measured, reader):
    for run in measured.runs.all():
        make_sample(run, 0, input_tokens=INPUT, output_tokens=OUTPUT)
    board_api = reader.get("/api/v1/leaderboard/").json()["rows"][0]
    runs = csv_rows(reader, "/api/v1/export/runs.csv")
    samples = csv_rows(reader, "/api/v1/export/samples.csv")

    per_request = float(board_api["cost_per_request_usd"])
    assert per_request > 0, "the endpoint is measured and priced"
    assert runs and {float(row["cost_per_request_usd"]) for row in runs} == {per_request}
    assert samples and {float(row["cost_usd"]) for row in samples} == {per_request}


def test_it_tells_the_same_task_time_and_cost_on_every_surface(measured, reader, page_client):
    loop_api = reader.get("/api/v1/agent-loop/", TASK).json()["projections"][0]
    advice_api = reader.get("/api/v1/advice/", ADHOC).json()["results"][0]
    board_api = reader.get("/api/v1/leaderboard/").json()["rows"][0]
    board_csv = next(csv.DictReader(io.StringIO(reader.get("/api/v1/export/leaderboard.csv")
                                                .getvalue().decode())))  # fmt: skip
    loop_page = page_data(page_client.get("/agent-loop/", TASK).content.decode(), "agent-data")[0]
    advisor_page = row_html(
        page_client.get("/advisor/loop/").content.decode(), "advice", measured.slug
    )

    task_ms = round(loop_api["wall_s"] * 1000)
    assert task_ms > 0 and loop_api["cost_usd"] > 0, "the endpoint is measured and priced"
    assert round(loop_page["wall_s"] * 1000) == task_ms, "agent-loop page vs its API"
    assert round(advice_api["task_p50_s"] * 1000) == task_ms, "advisor vs agent loop"
    task_cents = cents(loop_api["cost_usd"])
    assert cents(loop_page["cost_usd"]) == task_cents, "agent-loop page vs its API"
    assert cents(advice_api["cost_per_task"]) == task_cents, "advisor vs agent loop"
    per_request = float(board_api["cost_per_request_usd"])
    assert cents(per_request * CALLS) == task_cents, "leaderboard API vs agent loop"
    assert float(board_csv["cost_per_request_usd"]) == per_request, "CSV export vs API"
    assert seconds(advice_api["task_p50_s"]) in advisor_page, "advisor page vs its API"
    assert usd_small(advice_api["cost_per_task"]) in advisor_page, "advisor page vs its API"
