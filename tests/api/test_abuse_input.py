"""Bad input and brute force: NUL bytes in query parameters are a 400 on every page and the API;
oversized or deeply nested JSON is a JSON 400; anonymous and user rates are separate; failed
logins lock out an account and an address."""

import json

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User

from benchmarks.models import Run
from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]


@pytest.fixture
def run() -> Run:
    return make_run(make_endpoint(make_provider("acme"), "acme-fast"), hours_ago(1))


def page_urls(run: Run) -> list[str]:
    return [
        "/",
        "/endpoints/acme-fast/",
        f"/runs/{run.id}/",
        "/price/",
        "/agent-loop/",
        "/compare/",
        "/alerts/",
        "/alerts/subscriptions/",
    ]


@pytest.mark.parametrize("param", ["workload", "vantage", "e"])
def test_it_answers_a_nul_byte_in_a_page_parameter_with_a_400(client, public, run, param):
    client.force_login(User.objects.create_user("ana"))
    for url in page_urls(run):
        response = client.get(url, {param: "base\x00"})
        assert response.status_code == 400, url
        assert param in response.content.decode(), url
        assert "Null characters are not allowed" in response.content.decode(), url


@pytest.mark.parametrize(
    "url", ["/api/v1/runs/", "/api/v1/leaderboard/", "/api/v1/alerts/", "/api/v1/endpoints/"]
)
def test_it_answers_a_nul_byte_in_an_api_parameter_with_a_json_400(reader, run, url):
    for param in ("workload", "vantage", "e"):
        response = reader.get(url, {param: "\x00"})
        assert response.status_code == 400
        assert response.json() == {param: ["Null characters are not allowed."]}


def test_it_answers_deeply_nested_json_with_a_json_400(staff):
    for depth in (11, 100_000):
        body = "[" * depth + "]" * depth
        response = staff.generic("POST", "/api/v1/runs/", body, content_type="application/json")
        assert response.status_code == 400
        assert "nested deeper than 10 levels" in response.json()["detail"]
    assert not Run.objects.exists()


def test_it_answers_an_oversized_body_with_a_json_400(staff):
    body = json.dumps({"endpoint": "acme-fast", "workload": "base", "pad": "x" * 300_000})
    response = staff.generic("POST", "/api/v1/runs/", body, content_type="application/json")
    assert response.status_code == 400
    assert "larger than 262144 bytes" in response.json()["detail"]


def test_it_keeps_anonymous_and_user_rates_apart(anon, reader, public, settings):
    settings.REST_FRAMEWORK = {
        **django_settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "4/min", "user": "2/min"},
    }
    # Anonymous readers get the anonymous rate, not the stricter user rate as well.
    assert [anon.get("/api/v1/workloads/").status_code for _ in range(5)] == [200] * 4 + [429]
    assert [reader.get("/api/v1/workloads/").status_code for _ in range(3)] == [200, 200, 429]


PASSWORD = "right-horse-battery"  # noqa: S105 - a test account's password


def login(client, username: str, password: str, address: str):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_it_locks_out_an_account_after_failed_logins(client, settings):
    User.objects.create_user("ana", password=PASSWORD)
    codes = [
        # Each try from another address: the account itself is what gets locked.
        login(client, "ana", "wrong", f"10.0.0.{attempt}").status_code
        for attempt in range(settings.AXES_FAILURE_LIMIT)
    ]
    assert codes == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    locked = login(client, "ana", PASSWORD, "10.0.1.1")
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session


def test_it_locks_out_an_address_trying_many_accounts(client, settings):
    User.objects.create_user("bo", password=PASSWORD)
    codes = [
        login(client, f"user{attempt}", "wrong", "10.0.0.9").status_code
        for attempt in range(settings.AXES_FAILURE_LIMIT)
    ]
    assert codes == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    assert login(client, "bo", PASSWORD, "10.0.0.9").status_code == 429
    # The same account from another address still logs in.
    assert login(client, "bo", PASSWORD, "10.0.0.10").status_code == 302
