"""A provider whose key variable is unset is not shown as plainly enabled, and "Test connection"
is on the provider's admin form and the endpoint's dashboard page, not only the endpoint's admin."""

import secrets

import pytest

from providers.models import Endpoint, Provider

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def admin_page(page, live_server, settings):
    settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = True
    password = secrets.token_urlsafe(12)
    from django.contrib.auth.models import User

    User.objects.create_superuser("root", password=password)
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    return page


def test_it_warns_when_a_saved_provider_has_no_key(admin_page, live_server, monkeypatch):
    monkeypatch.delenv("TOKSPEED_TEST_NOKEY", raising=False)
    page = admin_page
    page.goto(f"{live_server.url}/admin/providers/provider/add/")
    page.fill("#id_name", "Nokey Cloud")
    page.fill("#id_slug", "nokey")
    page.select_option("#id_protocol", "openai_chat")
    page.fill("#id_base_url", "https://nokey.example.com/v1")
    page.fill("#id_api_key_env", "TOKSPEED_TEST_NOKEY")
    page.click("input[name=_save]")
    warning = page.locator(".messagelist .warning")
    assert "TOKSPEED_TEST_NOKEY is not set" in warning.inner_text(), "saved without a warning"
    row = page.locator("#result_list tbody tr", has_text="Nokey Cloud")
    assert "not set: not measured" in row.inner_text(), "the list still says plainly enabled"
    screenshot(page, "admin-provider-without-key")


def test_it_tests_a_providers_endpoints_from_its_form_and_the_endpoint_page(
    admin_page, live_server, simulator
):
    page = admin_page
    sim = Provider.objects.create(
        slug="sim", name="Sim", protocol="openai_chat", base_url=simulator.openai_base,
        simulated=True,
    )  # fmt: skip
    Endpoint.objects.create(provider=sim, slug="good", model="sim-fast+ttft=30")
    Endpoint.objects.create(provider=sim, slug="bad", model="sim-fast+fault=500")

    page.goto(f"{live_server.url}/admin/providers/provider/{sim.pk}/change/")
    page.click("#connection-test button:has-text('Test bad')")
    failed = page.locator("#connection-test .connection-result.errornote")
    failed.wait_for(timeout=30_000)
    assert failed.inner_text().startswith("Failed (HTTP 500)")
    page.click("#connection-test button:has-text('Test good')")
    ok = page.locator("#connection-test .connection-result.success")
    ok.wait_for(timeout=30_000)
    assert ok.inner_text().startswith("Connected: first token after")
    screenshot(page, "admin-provider-test-connection")

    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/endpoints/good/")
        page.click("#connection-test button")
        result = page.locator("#connection-test .connection-result.success")
        result.wait_for(timeout=30_000)
        assert "first token after" in result.inner_text()
        screenshot(page, f"endpoint-test-connection-{width}")
