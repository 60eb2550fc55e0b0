"""The workloads page and the leaderboard's lanes, as a person sees them at 1366 and 390 px."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from alerts.testing import store_run
from benchmarks.models import Vantage, Workload
from providers.models import Endpoint, Provider
from tests.browser.conftest import screenshot
from tests.custom_workload_data import TEXT_MARK, prompt_suite, system_prompt, tool_schemas

pytestmark = pytest.mark.django_db(transaction=True)


def seed() -> None:
    provider = Provider.objects.create(
        slug="acme", name="Acme", protocol="openai_chat", base_url="https://acme.example/v1"
    )
    vantage = Vantage.objects.filter(is_default=True).first() or Vantage.objects.create(
        slug="eu", label="EU", queue="eu", is_default=True
    )
    base, _ = Workload.objects.get_or_create(slug="base", defaults={"name": "Base"})
    slot = timezone.now() - timedelta(hours=2)
    for lane, price, decode, ttft in (
        ("standard", "4", 80.0, 500.0),
        ("priority", "7.2", 150.0, 320.0),
        ("flex", "2", 40.0, 1100.0),
    ):
        endpoint = Endpoint.objects.create(
            provider=provider,
            slug=f"gpt-x-{lane}",
            model="gpt-x",
            lane=lane,
            price_input_per_mtok=Decimal(price) / 4,
            price_output_per_mtok=Decimal(price),
        )
        store_run(
            endpoint=endpoint,
            workload=base,
            vantage=vantage,
            slot=slot,
            decode=[decode] * 3,
            ttft=[ttft] * 3,
        )
    workload = Workload(
        slug="support-agent",
        name="Support agent",
        system_prompt=system_prompt(20_000),
        prompt_suite=prompt_suite(12),
        tools=tool_schemas(6),
    )
    workload.save()


@pytest.mark.parametrize("width", [1366, 390])
def test_it_shows_lanes_side_by_side_and_workloads_by_shape(logged_in, live_server, width):
    seed()
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/")
    lanes = page.locator("#lanes")
    assert lanes.is_visible()
    assert "1.9× the decode for 1.8× the price" in lanes.inner_text()
    screenshot(page, f"leaderboard-lanes-{width}")
    page.goto(f"{live_server.url}/price/")
    screenshot(page, f"price-lanes-{width}")
    page.goto(f"{live_server.url}/workloads/")
    row = page.locator('tr[data-workload="support-agent"]')
    assert "custom" in row.inner_text() and "12" in row.inner_text()
    assert TEXT_MARK not in page.content()
    screenshot(page, f"workloads-{width}")
