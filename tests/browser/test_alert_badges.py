"""Alerts in the browser: the leaderboard badge leads to the alert, and the endpoint's history
charts draw its change points. Screenshots: leaderboard-alerts.png, endpoint-alerts.png."""

import pytest

from tests import dashboard_data as data
from tests.alerts.test_alert_badges import make_alert, make_change_point

from .conftest import drawn_charts, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MARKERS = """(id) => {
  const chart = Chart.getChart(id);
  return {count: chart.canvas.dataset.changePoints,
          px: (chart.$changePoints || []).map((p) => p.px),
          top: chart.chartArea.top, bottom: chart.chartArea.bottom};
}"""


def test_it_badges_the_board_and_annotates_the_endpoint_charts(logged_in, live_server):
    page = logged_in
    eps = data.demo(slots=12)
    ep = eps["gpu-llama-70b"]
    alert = make_alert(ep, shift=0.22)
    make_alert(eps["frontier-large"], metric="ttft_ms", severity="minor", status="acknowledged")
    make_alert(eps["sim-gpu"], kind="outage", metric="availability")
    slots = data.recent_slots(12)
    make_change_point(ep, slots[5], before=74.0, after=57.7)
    make_change_point(ep, slots[8], metric="ttft_ms", before=620.0, after=760.0)

    page.goto(f"{live_server.url}/")
    drawn_charts(page)
    badge = page.locator(f'#leaderboard tr[data-slug="{ep.slug}"] a.alert-badge')
    assert badge.inner_text().startswith("▼ decode −22")
    screenshot(page, "leaderboard-alerts")
    # With the alerts column the table still fits its card at 1440 px: no sideways scrolling.
    wrap = page.eval_on_selector(".table-wrap", "w => [w.scrollWidth, w.clientWidth]")
    assert wrap[0] <= wrap[1], f"table overflows its card at 1440 px: {wrap}"
    badge.click()
    page.wait_for_url(f"{live_server.url}/alerts/{alert.id}/")

    page.goto(f"{live_server.url}/endpoints/{ep.slug}/?window=7d")
    drawn_charts(page)
    assert "22 % slower" in page.inner_text("#endpoint-alerts")
    decode = page.evaluate(MARKERS, "chart-history-decode")
    ttft = page.evaluate(MARKERS, "chart-history-ttft")
    assert decode["count"] == "1" and ttft["count"] == "1"
    # Hovering a marker names the change.
    box = page.locator("#chart-history-decode").bounding_box()
    page.mouse.move(box["x"] + decode["px"][0], box["y"] + (decode["top"] + decode["bottom"]) / 2)
    title = page.get_attribute("#chart-history-decode", "title")
    assert "74.0 tok/s → 57.7 tok/s (−22 %)" in title
    screenshot(page, "endpoint-alerts")
