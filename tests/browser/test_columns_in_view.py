"""Every column in view on a 1366 px laptop and a 390 px phone, with the names a real install
has (long simulated labels, a failing endpoint with an outage, notes in the advisor's rows):
no column cut off or hidden in a sideways scroll, the nav's every link on screen, and the
compare charts' endpoint names readable and told apart by colour. Screenshots: columns-*.png."""

from datetime import timedelta

import pytest
import time_machine

from advisor.digest import rebuild
from benchmarks.models import Run
from providers.models import Endpoint
from tests import advisor_data as seed
from tests import dashboard_data as data
from tests.alerts.test_alert_badges import make_alert

from .conftest import drawn_charts, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
NOW = seed.NOW  # advisor_data's clock: its runs and the board's line up

# Labels as `make run` registers them: the same tail at several providers.
LABELS = {
    "wafer-llama-70b": "Speculative decoding, bursty (simulated)",
    "gpu-llama-70b": "Wafer-class ~750 tok/s (simulated)",
    "frontier-large": "GPU-class ~70 tok/s (simulated)",
    "fast": "Llama 3.3 70B Instruct Turbo (simulated)",
    "cheap": "Llama 3.3 70B Instruct, batch lane (simulated)",
    "lonely": "Llama 3.3 70B Instruct Turbo, long context (simulated)",
}

# Every element matching `selector` whose right edge lies past the window, by its text.
CUT = """([selector, width]) => [...document.querySelectorAll(selector)]
  .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > width + 0.5)
  .map((e) => (e.innerText || e.getAttribute('data-label') || e.tagName).trim().slice(0, 40))"""


def crowded() -> dict[str, Endpoint]:
    """The board, the advisor and the alerts of a busy install: long labels, a failing endpoint
    with an outage, two alerts on one row, and the advisor's rows carrying notes."""
    profile, *_ = seed.world(now=NOW)
    eps = data.demo(slots=6, with_samples=False)
    for slug, label in LABELS.items():
        Endpoint.objects.filter(slug=slug).update(display_name=label)
    make_alert(eps["sim-gpu"], kind="outage", metric="availability")
    make_alert(eps["gpu-llama-70b"], shift=0.22)
    make_alert(eps["gpu-llama-70b"], metric="ttft_ms", severity="minor", status="acknowledged")
    failed = data.run(eps["sim-gpu"], NOW - timedelta(minutes=5), ok=0, errors=5)
    Run.objects.filter(pk=failed.pk).update(
        failure_reason="server_error: every request answered HTTP 503 Service Unavailable"
    )
    profile.input_tokens = 400  # past the 200 measured: each row notes its TTFT is extrapolated
    profile.save()
    rebuild(now=NOW)
    return eps


def cut(page, selector: str, width: int) -> list[str]:
    return page.evaluate(CUT, [selector, width])


@time_machine.travel(NOW, tick=True)
def test_it_shows_every_column_on_a_laptop(page, live_server, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    crowded()
    page.set_viewport_size({"width": 1366, "height": 900})

    page.goto(f"{live_server.url}/")
    failing = '#leaderboard tr[data-slug="sim-gpu"]'
    assert page.inner_text(f"{failing} td.c-last .status") == "failing"
    assert "outage" in page.inner_text(f"{failing} td.alerts")
    assert cut(page, "#leaderboard th, #leaderboard td, #leaderboard .alert-badge", 1366) == []
    screenshot(page, "columns-1366-board")

    page.goto(f"{live_server.url}/runs/")
    assert cut(page, "#runs th, #runs td", 1366) == []
    assert page.locator("#runs tbody tr").first.get_by_text("requests ›").is_visible()

    page.goto(f"{live_server.url}/advisor/chat/")
    assert "is past the 200 measured" in page.inner_text("#advice")
    assert cut(page, "#advice th, #advice td", 1366) == []
    screenshot(page, "columns-1366-advisor")

    page.goto(f"{live_server.url}/alerts/")
    assert page.locator("#alerts tbody tr").count() == 3
    assert cut(page, "#alerts th, #alerts td", 1366) == []

    for path in ("/price/", "/compare/?e=sim-gpu&e=gpu-llama-70b&e=wafer-llama-70b"):
        page.goto(f"{live_server.url}{path}")
        assert cut(page, "main th, main td", 1366) == [], path


@time_machine.travel(NOW, tick=True)
def test_it_fits_every_column_on_a_phone(page, live_server, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    crowded()
    page.set_viewport_size({"width": 390, "height": 844})
    paths = ["/", "/runs/", "/advisor/", "/advisor/chat/", "/price/", "/alerts/",
             "/compare/?e=sim-gpu&e=gpu-llama-70b&e=wafer-llama-70b"]  # fmt: skip
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
        # Every value of every row on screen: cards, not one column and a hidden scroll.
        assert cut(page, "main td", 390) == [], path
        # Every page of the nav on screen: it wraps, none is cut off at the edge.
        assert cut(page, "header nav a", 390) == [], path
        name = path.strip("/").split("?")[0].replace("/", "-") or "board"
        screenshot(page, f"columns-390-{name}")

    page.goto(f"{live_server.url}/advisor/")
    card = page.locator('#profiles tr[data-profile="chat"]')
    assert card.locator("td.recommended").inner_text().startswith(LABELS["fast"])
    assert card.bounding_box()["height"] < 320  # no tall blank row beside a narrow column

    page.goto(f"{live_server.url}/advisor/chat/")
    row = page.locator('#advice tr[data-slug="fast"]')
    for label in ("Task p90", "Availability", "TTFT / call", "Decode tok/s", "Runs"):
        cell = row.locator(f'td[data-label="{label}"]')
        assert cell.is_visible() and cell.inner_text().strip(), label


# The agent-loop chart's names: each line as drawn, its width in the tick font, and the room
# its axis has; each bar's colour.
AXIS = """(id) => {
  const chart = Chart.getChart(id), scale = chart.scales.y;
  const ctx = chart.ctx;
  ctx.save();
  ctx.font = Chart.helpers.toFont(scale.options.ticks.font).string;
  const labels = scale.ticks.map((t) => [].concat(t.label));
  const widest = Math.max(...labels.flat().map((line) => ctx.measureText(line).width));
  ctx.restore();
  return {labels: labels.map((l) => l.join(" / ")), widest, room: scale.width, left: scale.left,
          colours: chart.data.datasets[0].backgroundColor};
}"""
LEGENDS = """() => Object.values(Chart.instances).map((c) => ({id: c.canvas.id, width: c.width,
  boxes: c.legend && c.legend.options.display ? c.legend.legendHitBoxes.map(
    (b) => [b.left, b.left + b.width]) : []}))"""


@time_machine.travel(NOW, tick=True)
def test_it_names_each_endpoint_readably_on_the_compare_charts(page, live_server, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    data.demo(slots=6, with_samples=False)
    sim = data.provider("simcloud-responses", name="SimCloud Responses", simulated=True)
    Endpoint.objects.filter(slug="sim-gpu").update(display_name="GPU-class ~70 tok/s (simulated)")
    other = data.endpoint(sim, "sim-gpu-responses", display_name="GPU-class ~70 tok/s (simulated)")
    data.series(other, ttft_ms=[640.0] * 6, decode_tps=[68.0] * 6)
    Endpoint.objects.filter(provider__slug="simulator").update(
        display_name="GPU-class ~70 tok/s (simulated)"
    )
    Endpoint.objects.filter(slug="wafer-llama-70b").update(
        display_name="Wafer-class ~750 tok/s (simulated)"
    )
    chosen = "e=sim-gpu&e=sim-gpu-responses&e=wafer-llama-70b&e=gpu-llama-70b"
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/compare/?{chosen}")
        drawn_charts(page)
        axis = page.evaluate(AXIS, "chart-cmp-agent")
        assert len(set(axis["labels"])) == 4, axis["labels"]  # four names, none twice
        assert axis["left"] >= 0 and axis["widest"] <= axis["room"], axis  # none cut at the edge
        assert len(set(axis["colours"])) == 4, axis["colours"]  # four colours
        key = page.eval_on_selector_all(
            "#compare-key li",
            "lis => lis.map((i) => [i.innerText, getComputedStyle(i.firstChild).backgroundColor])",
        )
        names = [name for name, _ in key]
        assert "GPU-class ~70 tok/s (simulated) · SimCloud Responses" in names
        assert len(set(names)) == 4 and len({colour for _, colour in key}) == 4
        assert cut(page, "#compare-key li", width) == []
        for chart in page.evaluate(LEGENDS):
            assert all(0 <= a and b <= chart["width"] for a, b in chart["boxes"]), chart["id"]
        page.locator("#chart-cmp-agent").scroll_into_view_if_needed()
        screenshot(page, f"columns-{width}-compare")
