"""Throttles count atomically: 8 parallel clients never get more than the limit through."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.db import connection
from rest_framework.test import APIClient

from tests.fault_helpers import redis_server

pytest_plugins = ["tests.api_fixtures"]
pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 40
CLIENTS = 8
EACH = 25  # 8 × 25 = 200 requests for 40 places


def parallel_codes() -> list[int]:
    def one_client(_: int) -> list[int]:
        client = APIClient()
        try:
            return [client.get("/api/v1/workloads/").status_code for _ in range(EACH)]
        finally:
            connection.close()  # this thread's own connection

    with ThreadPoolExecutor(CLIENTS) as pool:
        return [code for codes in pool.map(one_client, range(CLIENTS)) for code in codes]


@pytest.fixture
def tight_rate(settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    settings.TOKSPEED_RESPONSE_CACHE = False
    settings.REST_FRAMEWORK = {
        **django_settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": f"{LIMIT}/hour", "user": "1000/hour"},
    }


@pytest.mark.parametrize("backend", ["redis", "database"])
def test_it_lets_exactly_the_limit_through_to_eight_parallel_clients(tight_rate, settings, backend):
    with redis_server() if backend == "redis" else nullcontext() as own_redis:
        if own_redis is not None:
            settings.CACHES = {
                "default": {
                    "BACKEND": "django.core.cache.backends.redis.RedisCache",
                    "LOCATION": own_redis.url,
                }
            }
        cache.clear()
        try:
            codes = parallel_codes()
        finally:
            cache.clear()
    passed = codes.count(200)
    assert set(codes) <= {200, 429}, codes
    assert passed == LIMIT, f"{passed} of {len(codes)} requests passed a limit of {LIMIT}"
