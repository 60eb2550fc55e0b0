"""Fixtures of the REST API tests, loaded with `pytest_plugins = ["tests.api_fixtures"]`."""

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from rest_framework.test import APIClient


@pytest.fixture
def fresh_throttles():
    """Throttle counters live in the cache: start each test with none."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def allow_private(settings):
    """Skip the DNS check of base URLs: no test may depend on name resolution."""
    settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = True


@pytest.fixture
def public(settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True


@pytest.fixture
def private(settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = False


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


@pytest.fixture
def staff_user(db) -> User:
    return User.objects.create_user("ada", is_staff=True)  # no password: hashing is slow


@pytest.fixture
def plain_user(db) -> User:
    return User.objects.create_user("bob")


@pytest.fixture
def staff(staff_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(staff_user)
    return client


@pytest.fixture
def reader(plain_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(plain_user)
    return client
