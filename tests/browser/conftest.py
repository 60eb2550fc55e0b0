"""Headless Chromium (Debian's /usr/bin/chromium) driven by Playwright against live_server."""

import os
import secrets
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still
# plain synchronous code, so Django's async-safety guard does not apply to them.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# The same variable as bin/test-preflight, which checks it before any test runs.
CHROMIUM = os.environ.get("TOKSPEED_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


# Module scope, not session: while Playwright's sync API is open it keeps an event loop running
# in this thread, and every later test that calls asyncio.run() would fail.
@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    # Nothing on the dashboard may come from the network: refuse, and report, any request
    # that leaves loopback (a CDN script, a web font...).
    off_host: list[str] = []

    def only_loopback(route):
        if route.request.url.startswith(("http://localhost", "http://127.0.0.1")):
            route.continue_()
        else:
            off_host.append(route.request.url)
            route.abort()

    context.route("**/*", only_loopback)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    context.close()
    assert not errors, f"JavaScript errors: {errors}"
    assert not off_host, f"Requests off this machine: {off_host}"


@pytest.fixture
def logged_in(page, live_server, django_user_model):
    """A page logged in through the real login form."""
    password = secrets.token_urlsafe(12)
    django_user_model.objects.create_user("viewer", password=password)
    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url
    screenshot(page, "login")
    page.fill("#id_username", "viewer")
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return page


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


CHART_STATE = """() => Object.values(Chart.instances).map((chart) => {
  const canvas = chart.canvas;
  const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
  return {id: canvas.id, painted, points: chart.data.datasets.reduce(
    (n, d) => n + d.data.filter((v) => v !== null && v !== undefined).length, 0)};
})"""


def drawn_charts(page) -> dict[str, dict]:
    """Chart.js instances on the page, each with its painted pixels and data points."""
    page.wait_for_function("() => window.Chart && Object.keys(Chart.instances).length > 0")
    return {chart["id"]: chart for chart in page.evaluate(CHART_STATE)}
