"""Every page at a laptop's 1366 px and a phone's 390 px: nothing wider than the screen, every
leaderboard column in view on the laptop, cards on the phone; the scatter and the compare
picker's search work."""

import pytest

from benchmarks.models import Run
from tests import dashboard_data as data

from .conftest import drawn_charts, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


def pages() -> list[str]:
    run = Run.objects.filter(endpoint__slug="gpu-llama-70b").first()
    return ["/", "/?group=model", "/endpoints/gpu-llama-70b/", f"/runs/{run.id}/", "/price/",
            "/agent-loop/", "/compare/?e=gpu-llama-70b&e=wafer-llama-70b", "/alerts/"]  # fmt: skip


def test_it_fits_every_page_on_a_laptop_and_a_phone(page, live_server, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    data.demo(slots=6, with_samples=True)
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for path in pages():
            page.goto(f"{live_server.url}{path}")
            page.wait_for_load_state("networkidle")
            assert page.evaluate(OVERFLOW) <= 0, f"{path} is wider than {width} px"
            screenshot(
                page, f"layout-{width}-{path.strip('/').split('?')[0].replace('/', '-') or 'board'}"
            )

    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/")
    last_header = page.locator("#leaderboard thead tr:not(.groups) th").last
    box = last_header.bounding_box()
    assert box["x"] + box["width"] <= 1366, "the last leaderboard column is off screen"
    scatter = drawn_charts(page)["chart-board-scatter"]
    assert scatter["points"] == len(data.DEMO) and scatter["painted"] > 500

    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{live_server.url}/")
    assert page.locator("#leaderboard thead").is_hidden()  # cards, each value labelled
    card = page.locator('#leaderboard tr[data-slug="gpu-llama-70b"]')
    assert card.bounding_box()["width"] <= 390
    label = page.evaluate(
        """() => getComputedStyle(document.querySelector(
        '#leaderboard tr[data-slug="gpu-llama-70b"] td.c-blended'), '::before').content"""
    )
    assert label == '"Blended 3:1 per 1M"'


def test_it_narrows_the_compare_picker_as_you_type(page, live_server, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    data.demo(slots=3, with_samples=False)
    page.goto(f"{live_server.url}/compare/")
    page.fill("#picker-search", "wafer")
    visible = page.eval_on_selector_all(
        "#picker label[data-search]:not([hidden]) input", "inputs => inputs.map(i => i.value)"
    )
    assert visible == ["wafer-llama-70b"]
    page.fill("#picker-search", "no such model")
    assert page.locator("#picker-none").is_visible()


def test_it_gives_a_time_axis_a_few_ticks_for_one_run_and_for_a_year(page, live_server, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    data.default_workloads()
    data.vantage()
    lone = data.endpoint(data.provider("lone"), "lone")
    data.run(lone, data.recent_slots(1)[0])
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    page.goto(f"{live_server.url}/endpoints/lone/")
    drawn_charts(page)
    ticks = page.evaluate(
        "() => Chart.getChart('chart-history-ttft').scales.x.ticks.map((t) => t.label)"
    )
    assert 2 <= len(ticks) <= 12 and len(set(ticks)) == len(ticks), ticks
    year = page.evaluate(
        """() => { const a = TS.timeAxis([0, 365 * 864e5]);
                   return (a.max - a.min) / a.ticks.stepSize; }"""
    )
    assert 2 <= year <= 12
    assert not [w for w in warnings if "ticks" in w], warnings
