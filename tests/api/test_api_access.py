"""REST API: who may read, token and session login, throttling, the schema and its docs page."""

import re
from datetime import UTC, datetime

import pytest
import time_machine
from django.conf import settings as django_settings
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.db import connections
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from dashboard.api.throttling import forget_ended_windows
from dashboard.models import ThrottleCount
from providers.models import Provider
from tests.api_factories import make_provider, token_client
from tests.fault_helpers import redis_server

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]
# Mid-minute, the clock stopped: the rate counters' window is the minute of time.time(), and a
# test whose requests straddled a minute's end counted them in two windows (CI failed so).
ONE_WINDOW = datetime(2026, 11, 2, 12, 0, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def one_rate_window():
    with time_machine.travel(ONE_WINDOW, tick=False):
        yield


@pytest.fixture(autouse=True)
def no_counters_left() -> None:
    """The rate counters are rows: a server that an earlier test in the same session started
    on the test database (tests/project) left its requests' rows committed, and a test here
    that counts rows counted those too. Each test starts with none (rolled back after it)."""
    ThrottleCount.objects.all().delete()


READS = [
    "/api/v1/providers/",
    "/api/v1/endpoints/",
    "/api/v1/workloads/",
    "/api/v1/schedules/",
    "/api/v1/vantages/",
    "/api/v1/runs/",
    "/api/v1/leaderboard/",
    "/api/v1/agent-loop/",
    "/api/v1/export/runs.csv",
]


@pytest.mark.parametrize("path", READS)
def test_it_needs_a_login_to_read_when_the_dashboard_is_private(anon, private, path):
    response = anon.get(path)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("path", READS)
def test_it_lets_anyone_read_when_the_dashboard_is_public(anon, public, path):
    assert anon.get(path).status_code == 200


def test_it_still_needs_staff_to_write_when_public(anon, public):
    body = {"slug": "x", "name": "X", "protocol": "gemini", "base_url": "https://x.example"}
    assert anon.post("/api/v1/providers/", body, format="json").status_code == 401
    assert not Provider.objects.exists()


def test_it_accepts_a_token_made_with_manage_py(plain_user, private, capsys):
    call_command("drf_create_token", plain_user.username)
    key = Token.objects.get(user=plain_user).key
    assert key in capsys.readouterr().out
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/providers/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/v1/providers/").status_code == 401


def test_it_checks_csrf_for_session_writes(staff_user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(staff_user)
    body = {"slug": "x", "name": "X", "protocol": "gemini", "base_url": "https://x.example"}
    response = client.post("/api/v1/providers/", body, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_it_throttles_anonymous_readers(anon, public, settings):
    settings.REST_FRAMEWORK = {
        **django_settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/min", "user": "5/min"},
    }
    codes = [anon.get("/api/v1/workloads/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    throttled = anon.get("/api/v1/workloads/")
    assert int(throttled["Retry-After"]) > 0


def test_it_counts_an_anonymous_reader_by_address_whatever_x_forwarded_for_says(
    anon, public, settings
):
    settings.REST_FRAMEWORK = {
        **django_settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/min", "user": "5/min"},
    }
    # A new made-up header each time (one far longer than any address) is still one reader.
    forged = ["203.0.113.7", "198.51.100.1, 203.0.113.9", "2001:db8::" + "1:" * 200 + "1"]
    codes = [
        anon.get("/api/v1/workloads/", HTTP_X_FORWARDED_FOR=header).status_code
        for header in [*forged, "192.0.2.44"]
    ]
    assert codes == [200, 200, 200, 429]


def test_it_counts_a_request_against_the_rate_in_one_statement(anon, public):
    # No Redis: the counter is one upsert of its window's row (it was a transaction of an
    # advisory lock, a cache read and a cache write: nine statements on every API request).
    with CaptureQueriesContext(connections["default"]) as queries:
        assert anon.get("/api/v1/workloads/").status_code == 200
        assert anon.get("/api/v1/workloads/").status_code == 200
    counting = [
        q["sql"] for q in queries if re.search(r"throttle|tokspeed_cache|advisory", q["sql"])
    ]
    assert len(counting) == 2, counting
    assert ThrottleCount.objects.get().count == 2


def test_it_forgets_the_counters_of_windows_that_have_ended(anon, public):
    assert anon.get("/api/v1/workloads/").status_code == 200
    (window,) = ThrottleCount.objects.all()
    assert forget_ended_windows(now=window.expires - 1) == 0  # still counting
    assert forget_ended_windows(now=window.expires + 1) == 1
    assert not ThrottleCount.objects.exists()


def test_it_lets_anonymous_readers_run_above_the_user_rate_in_a_shared_cache(
    anon, public, settings
):
    with redis_server() as own_redis:
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": own_redis.url,
            }
        }
        settings.REST_FRAMEWORK = {
            **django_settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"anon": "4/min", "user": "2/min"},
        }
        codes = [anon.get("/api/v1/workloads/").status_code for _ in range(5)]
        assert codes == [200, 200, 200, 200, 429]
        # The counters are in Redis, where every web process reads them.
        assert any(b"throttle_anon" in key for key in own_redis.client().keys())


def test_it_throttles_users_by_their_own_rate(plain_user, private, settings):
    settings.REST_FRAMEWORK = {
        **django_settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "1/min", "user": "2/min"},
    }
    client = token_client(plain_user)
    assert [client.get("/api/v1/runs/").status_code for _ in range(3)] == [200, 200, 429]


def test_it_serves_an_openapi_schema_of_every_resource(anon, private):
    response = anon.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/providers/",
        "/api/v1/endpoints/{slug}/history/",
        "/api/v1/runs/{id}/samples/",
        "/api/v1/leaderboard/",
        "/api/v1/agent-loop/",
        "/api/v1/export/samples.csv",
    ):
        assert path in paths
    provider = response.json()["components"]["schemas"]["Provider"]["properties"]
    assert "api_key_env" in provider and "key_configured" in provider
    assert not {"api_key", "key", "token"} & set(provider)


def test_it_serves_docs_that_load_nothing_from_the_network(anon, private):
    response = anon.get("/api/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "external asset"
    assets = re.findall(r"""["'](/static/[^"']+)["']""", html) or re.findall(
        rf"""["']({re.escape(django_settings.STATIC_URL)}[^"']+)["']""", html
    )
    assert assets, "the docs page references its assets"
    for asset in assets:
        name = asset.split(django_settings.STATIC_URL, 1)[1].split("?")[0]
        assert finders.find(name), f"{name} is not in the static files"


def test_it_never_returns_a_key_anywhere_in_the_providers_api(reader, monkeypatch):
    secret = "sk-ant-api03-very-secret"  # noqa: S105 (a fake key the API must not echo)
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    make_provider("anthropic", api_key_env="ANTHROPIC_API_KEY", protocol="anthropic_messages")
    for path in ("/api/v1/providers/", "/api/v1/providers/anthropic/", "/api/v1/endpoints/"):
        assert secret not in reader.get(path).content.decode()
