"""The runs list and the exports page in headless Chromium, wide (1366 px) and phone (390 px):
paging, filtering, asking for an export and downloading it, nothing wider than the screen (on a
phone each run is a card)."""

import re
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.utils import timezone

from benchmarks.models import Export, Run
from dashboard.exports import jobs
from dashboard.views import runs as runs_view
from tests import dashboard_data as data

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# The page must not scroll sideways: a wide table turns into cards or scrolls inside its container.
OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"


def shot(page, name: str) -> None:
    """Screenshots kept with the others, and in /tmp for a quick look."""
    shutil.copy(screenshot(page, name), Path(tempfile.gettempdir()) / f"{name}.png")


def listed(page) -> list[int]:
    return [
        int(i)
        for i in page.eval_on_selector_all("#runs tbody tr", "rs => rs.map(r => r.dataset.run)")
    ]


@pytest.fixture
def seeded(monkeypatch):
    # Pinned (and ticking) for the whole test: slots and "5 minutes ago" never straddle a day.
    traveller = time_machine.travel("2026-06-15 10:20:00+00:00", tick=True)
    traveller.start()
    monkeypatch.setattr(runs_view, "PAGE_SIZE", 10)
    eps = data.demo(slots=6, with_samples=False)
    broken = data.run(
        eps["gpu-llama-70b"],
        timezone.now() - timedelta(minutes=5),
        wl=data.workload("long-context"),
        ok=0,
        errors=5,
    )
    broken.failure_reason = "server_error: every request answered HTTP 503 Service Unavailable"
    broken.save(update_fields=["failure_reason"])
    yield eps
    traveller.stop()


def test_it_pages_and_filters_the_runs_list_wide_and_on_a_phone(logged_in, live_server, seeded):
    page = logged_in
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/runs/")
    newest = list(Run.objects.order_by("-slot", "-id").values_list("id", flat=True))
    assert listed(page) == newest[:10]
    assert "HTTP 503" in page.inner_text(f'#runs tr[data-run="{newest[0]}"]')
    assert page.evaluate(OVERFLOW) <= 0
    shot(page, "runs-1366")

    page.click("a[rel=next]")
    page.wait_for_url(re.compile(r"cursor="))
    assert listed(page) == newest[10:20]
    page.click("a[rel=prev]")
    page.wait_for_url(re.compile(r"cursor="))
    assert listed(page) == newest[:10]

    page.select_option("select[name=endpoint]", "wafer-llama-70b")
    page.click(".filters button[type=submit]")
    page.wait_for_url(re.compile(r"endpoint=wafer-llama-70b"))
    wafer = Run.objects.filter(endpoint__slug="wafer-llama-70b").order_by("-slot", "-id")
    assert listed(page) == list(wafer.values_list("id", flat=True)[:10])

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/runs/")
    assert page.evaluate(OVERFLOW) <= 0
    # Each run is a card with every value on screen, not a table scrolled sideways.
    wrap = page.eval_on_selector(".table-wrap", "w => [w.scrollWidth, w.clientWidth]")
    assert wrap[0] <= wrap[1]
    card = page.locator("#runs tbody tr").first
    assert card.get_by_text("requests ›").is_visible()
    assert card.locator('td[data-label="Status"]').is_visible()
    box = card.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    shot(page, "runs-390")

    page.goto(f"{live_server.url}/endpoints/gpu-llama-70b/")
    page.click("#all-runs")
    page.wait_for_url(re.compile(r"/runs/\?endpoint=gpu-llama-70b"))
    assert listed(page)[0] == newest[0]


def test_it_asks_for_an_export_and_links_the_file(
    logged_in, live_server, seeded, settings, tmp_path
):
    settings.TOKSPEED_EXPORT_DIR = str(tmp_path)
    page = logged_in
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/runs/?endpoint=wafer-llama-70b")
    page.click("text=background exports")
    page.wait_for_url(re.compile(r"/exports/\?endpoint=wafer-llama-70b"))
    assert page.input_value("#export-form select[name=endpoint]") == "wafer-llama-70b"
    page.select_option("select[name=file_format]", "parquet")
    page.click("#export-form button[type=submit]")
    page.wait_for_url(f"{live_server.url}/exports/")
    assert "queued" in page.inner_text(".messages")
    export = Export.objects.get()
    assert export.filters == {"endpoint": "wafer-llama-70b"} and export.file_format == "parquet"
    assert "Waiting for a worker" in page.inner_text(f'tr[data-export="{export.token}"]')

    jobs.build(export.id)  # what the worker does with the queued message
    export.refresh_from_db()
    page.reload()
    row = page.locator(f'tr[data-export="{export.token}"]')
    assert "Ready until" in row.inner_text() and str(export.rows) in row.inner_text()
    with page.expect_download() as download:
        row.locator("text=download").click()
    assert download.value.suggested_filename == export.file_name
    shot(page, "exports-1366")

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate(OVERFLOW) <= 0
    shot(page, "exports-390")
