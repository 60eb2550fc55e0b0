"""The API's docs page in headless Chromium: it draws every resource from local assets only."""

from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


def test_it_renders_the_docs_without_touching_the_network(live_server):
    requested: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        page = browser.new_page()
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{live_server.url}/api/v1/docs/")
        page.wait_for_selector("#operations-tag-runs", timeout=15_000)
        title = page.locator(".info .title").inner_text()
        tags = page.locator(".opblock-tag").all_inner_texts()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "api-docs.png"), full_page=False)
        browser.close()
    assert "tokspeed API" in title
    for resource in ("providers", "endpoints", "runs", "leaderboard", "export"):
        assert any(tag.lower().startswith(resource) for tag in tags), resource
    outside = [url for url in requested if not url.startswith(live_server.url)]
    assert outside == [], f"requests left the server: {outside}"
