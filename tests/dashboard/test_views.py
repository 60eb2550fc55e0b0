"""Dashboard pages: access, filters, 400s on bad parameters, empty states, what rows show."""

import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks.models import Run
from benchmarks.selectors.agent_loop import DEFAULT_CALLS, DEFAULT_TOKENS_PER_CALL
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db
PAGES = ["/", "/price/", "/agent-loop/", "/compare/"]


@pytest.fixture(autouse=True)
def defaults():
    data.default_workloads()
    data.vantage()


@pytest.fixture
def user_client(client):
    client.force_login(User.objects.create_user("ana"))
    return client


def rendered_slugs(html: str, table_id: str) -> list[str]:
    table = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-slug="([^"]+)"', table)


@pytest.mark.parametrize("path", [*PAGES, "/endpoints/x/", "/runs/1/"])
def test_it_sends_anonymous_visitors_to_the_login_page(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_it_shows_the_login_form(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'name="password"' in response.content


@pytest.mark.parametrize("path", PAGES)
def test_it_opens_pages_to_everyone_when_the_dashboard_is_public(client, settings, path):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    data.demo(slots=3)
    assert client.get(path).status_code == 200


def test_it_ranks_the_leaderboard_and_marks_simulated_endpoints(user_client):
    data.demo()
    response = user_client.get("/")
    html = response.content.decode()
    expected = [row.slug for row in leaderboard(BoardFilters())]
    assert rendered_slugs(html, "leaderboard") == expected
    assert expected[0] == "wafer-llama-70b"  # the demo's fastest decode
    assert "simulated" in html.split('data-slug="sim-gpu"', 1)[1].split("</tr>", 1)[0]
    assert 'id="board-data"' in html and "All concurrent requests together" in html
    for label in ("Alerts", "Speed × price", "Agent loop", "Compare", "API docs", "Admin"):
        assert label in html


def test_it_sorts_by_the_column_asked_for(user_client):
    data.demo()
    fastest_first = rendered_slugs(user_client.get("/?sort=ttft").content.decode(), "leaderboard")
    slowest_first = rendered_slugs(user_client.get("/?sort=-ttft").content.decode(), "leaderboard")
    assert fastest_first == list(reversed(slowest_first))
    assert fastest_first[0] == "wafer-llama-70b"


def test_it_narrows_the_board_with_filters(user_client):
    eps = data.demo()
    old = data.recent_slots(1)[0].replace(year=2000)
    data.run(eps["frontier-large"], old, decode_tps=9999)
    week = user_client.get("/?window=7d&tod=3").content.decode()
    assert "Runs at 18–24 UTC only".lower() in week.lower()
    assert "9,999" not in week  # a run outside every window never shows
    rows = {r.slug: r for r in leaderboard(BoardFilters(window_hours=168, tod_bucket=3))}
    assert (
        rows["wafer-llama-70b"].runs
        == Run.objects.filter(
            endpoint=eps["wafer-llama-70b"], workload__slug="base", tod_bucket=3
        ).count()
    )


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/?window=5y", "window"),
        ("/?tod=9", "tod"),
        ("/?sort=colour", "sort"),
        ("/?workload=unknown", "workload"),
        ("/?concurrency=0", "concurrency"),
        ("/price/?y=weight", "y"),
        ("/endpoints/wafer-llama-70b/?window=abc", "window"),
        ("/compare/?e=wafer-llama-70b&e=nope", "e"),
        ("/compare/?e=a&e=b&e=c&e=d&e=f", "e"),
        ("/agent-loop/?calls=0", "calls"),
        ("/agent-loop/?tokens_per_call=lots", "tokens_per_call"),
        ("/agent-loop/?tool_s=-1", "tool_s"),
    ],
)
def test_it_answers_bad_parameters_with_a_400_naming_the_field(user_client, path, field):
    data.demo(slots=2, with_samples=False)
    response = user_client.get(path)
    assert response.status_code == 400
    html = response.content.decode()
    assert f"{field}:" in html  # the message names the field
    assert f'data-field="{field}"' in html


def test_it_says_how_to_add_an_endpoint_when_there_is_none(user_client):
    html = user_client.get("/").content.decode()
    assert 'data-empty="no_endpoints"' in html
    assert "register_simulator" in html and "register_providers" in html


def test_it_says_how_to_start_a_run_when_nothing_was_measured(user_client):
    data.endpoint(data.provider("p"), "p")
    html = user_client.get("/").content.decode()
    assert 'data-empty="no_runs"' in html and "run_now" in html
    assert 'data-empty="no_runs"' in user_client.get("/endpoints/p/").content.decode()


def test_it_says_when_filters_leave_nothing(user_client):
    ep = data.endpoint(data.provider("p"), "p")
    night = [slot for slot in data.recent_slots(6) if slot.hour == 2]
    data.series(ep, ttft_ms=[300] * len(night), decode_tps=[80] * len(night), slots=night)
    assert "data-empty" not in user_client.get("/?tod=0").content.decode()
    html = user_client.get("/?tod=1").content.decode()  # 06–12 UTC: nothing ran then
    assert 'data-empty="no_data_in_filters"' in html and "30-day window" in html


def test_it_shows_an_endpoint_history_with_its_recent_runs(user_client):
    eps = data.demo()
    ep = eps["gpu-llama-70b"]
    response = user_client.get(f"/endpoints/{ep.slug}/")
    html = response.content.decode()
    assert response.status_code == 200
    latest = Run.objects.filter(endpoint=ep).order_by("-slot").first()
    assert f"/runs/{latest.id}/" in html
    assert 'id="history-data"' in html and "Roofline efficiency" in html
    assert user_client.get("/endpoints/no-such-endpoint/").status_code == 404


def test_it_draws_a_waterfall_from_the_runs_samples(user_client):
    data.demo()
    run = Run.objects.filter(samples__isnull=False).distinct().first()
    html = user_client.get(f"/runs/{run.id}/").content.decode()
    assert 'id="waterfall-data"' in html
    assert html.count("<tr") - 1 == run.samples.count()  # one row per request (+ header)


def test_it_projects_the_agent_loop_with_defaults_and_with_inputs(user_client):
    data.demo()
    default = user_client.get("/agent-loop/").content.decode()
    assert f'value="{DEFAULT_CALLS}"' in default and f'value="{DEFAULT_TOKENS_PER_CALL}"' in default
    rows = {r.slug: r for r in leaderboard(BoardFilters())}
    wafer = rows["wafer-llama-70b"]
    html = user_client.get("/agent-loop/?calls=3&tokens_per_call=100&tool_s=2").content.decode()
    expected = 3 * (wafer.ttft_p50_ms / 1000 + 100 / wafer.decode_tps_p50) + 3 * 2
    row = html.split('data-slug="wafer-llama-70b"', 1)[1].split("</tr>", 1)[0]
    assert f"{expected:.2f} s" in row


def test_it_marks_the_price_frontier(user_client):
    data.demo(slots=3, with_samples=False)
    html = user_client.get("/price/").content.decode()
    cheap_fast = html.split('data-slug="gpu-llama-70b"', 1)[1].split("</tr>", 1)[0]
    pricey_slow = html.split('data-slug="frontier-large"', 1)[1].split("</tr>", 1)[0]
    assert "on the frontier" in cheap_fast  # cheapest of all
    assert "on the frontier" not in pricey_slow  # dearer and slower than wafer


def test_it_compares_two_endpoints_in_the_order_asked(user_client):
    data.demo(slots=3, with_samples=False)
    html = user_client.get("/compare/?e=sim-gpu&e=wafer-llama-70b").content.decode()
    assert rendered_slugs(html, "compare-table") == ["sim-gpu", "wafer-llama-70b"]
    assert 'id="compare-histories"' in html
    picker = user_client.get("/compare/?e=sim-gpu").content.decode()
    assert 'id="compare-table"' not in picker and "choose 2 to 4" in picker


def test_it_tells_apart_an_endpoint_never_measured_and_one_quiet_in_the_window(user_client):
    ep = data.endpoint(data.provider("p"), "p")
    assert 'data-empty="no_runs"' in user_client.get("/endpoints/p/").content.decode()
    data.run(ep, data.recent_slots(1)[0].replace(year=2001))
    quiet = user_client.get("/endpoints/p/").content.decode()
    assert 'data-empty="no_data_in_filters"' in quiet and "30-day window" in quiet


def test_it_keeps_the_filters_in_links_to_endpoint_pages(user_client):
    data.demo(slots=3, with_samples=False)
    html = user_client.get("/?window=7d&sort=ttft").content.decode()
    assert 'href="/endpoints/wafer-llama-70b/?window=7d"' in html  # the window, not the sort
    assert 'name="sort" value="ttft"' in html  # applying filters keeps the sort


@pytest.mark.parametrize("path", ["/", "/price/", "/agent-loop/", "/endpoints/wafer-llama-70b/"])
def test_it_reads_a_page_in_the_same_number_of_queries_however_many_endpoints(
    user_client, path, django_assert_num_queries
):
    data.demo(slots=3, with_samples=False)
    with CaptureQueriesContext(connection) as few:
        assert user_client.get(path).status_code == 200
    for index in range(6):
        extra = data.endpoint(data.provider(f"extra-{index}"), f"extra-{index}")
        data.series(extra, ttft_ms=[400, 410, 420], decode_tps=[90, 95, 99])
    with django_assert_num_queries(len(few.captured_queries)):
        assert user_client.get(path).status_code == 200


def test_it_says_why_an_endpoint_is_disabled_and_which_variable_enables_it(user_client):
    data.endpoint(data.provider("groq", enabled=False, api_key_env="TOKSPEED_TEST_GROQ_KEY"), "g")
    page = user_client.get("/endpoints/g/").content.decode()
    assert 'data-empty="disabled"' in page and "run_now" not in page
    assert "<code>TOKSPEED_TEST_GROQ_KEY</code> is not set" in page
    assert "TOKSPEED_TEST_GROQ_KEY=… make run" in page

    data.endpoint(data.provider("acme"), "a", enabled=False)
    page = user_client.get("/endpoints/a/").content.decode()
    assert "this endpoint is disabled in the admin" in page and "run_now" not in page
