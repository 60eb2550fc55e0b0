"""The admin's "Test connection" on an endpoint's page: the answer shows without leaving it."""

import secrets

import pytest

from providers.models import Endpoint, Provider

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_tests_an_endpoint_from_its_admin_page(page, live_server, simulator, settings):
    settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = True
    password = secrets.token_urlsafe(12)
    from django.contrib.auth.models import User

    User.objects.create_superuser("root", password=password)
    sim = Provider.objects.create(
        slug="sim", name="Sim", protocol="openai_chat", base_url=simulator.openai_base,
        simulated=True,
    )  # fmt: skip
    good = Endpoint.objects.create(provider=sim, slug="good", model="sim-fast+ttft=30")
    bad = Endpoint.objects.create(provider=sim, slug="bad", model="sim-fast+fault=500")

    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", password)
    page.click("input[type=submit]")

    page.goto(f"{live_server.url}/admin/providers/endpoint/{good.pk}/change/")
    page.click("#connection-test button")
    result = page.locator("#connection-test .connection-result.success")
    result.wait_for(timeout=30_000)
    assert result.inner_text().startswith("Connected: first token after")
    assert "32 tokens" in result.inner_text()
    assert "/admin/providers/endpoint/" in page.url  # still on the page
    screenshot(page, "admin-test-connection")

    page.goto(f"{live_server.url}/admin/providers/endpoint/{bad.pk}/change/")
    page.click("#connection-test button")
    failed = page.locator("#connection-test .connection-result.errornote")
    failed.wait_for(timeout=30_000)
    assert failed.inner_text().startswith("Failed (HTTP 500)")
