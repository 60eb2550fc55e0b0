"""The dashboard in headless Chromium: pages load with seeded data, charts draw, filters and
the calculator answer. Screenshots go to artifacts/screenshots/."""

import re

import pytest

from benchmarks.models import Run
from benchmarks.selectors.agent_loop import project
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.selectors.pricing import pareto_frontier
from tests import dashboard_data as data

from .conftest import drawn_charts, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def assert_drawn(charts: dict[str, dict], ids: list[str]) -> None:
    for chart_id in ids:
        assert chart_id in charts, f"{chart_id} missing: {sorted(charts)}"
        assert charts[chart_id]["painted"] > 500, f"{chart_id} is blank"
        assert charts[chart_id]["points"] > 0, f"{chart_id} has no data"


# Pixels between neighbouring x-axis labels of a chart, as drawn (after Chart.js skipped some).
LABEL_GAPS = """(id) => {
  const chart = Chart.getChart(id), scale = chart.scales.x, ctx = chart.ctx;
  ctx.save(); ctx.font = Chart.helpers.toFont(scale.options.ticks.font).string;
  const boxes = scale.ticks.map((t, i) => {
    const w = ctx.measureText(String(scale.options.ticks.callback(t.value))).width;
    const x = scale.getPixelForTick(i);
    return [x - w / 2, x + w / 2];
  });
  ctx.restore();
  return boxes.slice(1).map((b, i) => Math.round(b[0] - boxes[i][1]));
}"""


# The waterfall's x-axis title and its tick labels, as drawn.
WATERFALL_AXIS = """() => {
  const c = Chart.getChart("chart-waterfall"), x = c.scales.x;
  return [c.options.scales.x.title.text, x.ticks.map((t) => x.options.ticks.callback(t.value))];
}"""


def board_order(page) -> list[str]:
    return page.eval_on_selector_all(
        "#leaderboard tbody tr", "rows => rows.map(r => r.dataset.slug)"
    )


def test_it_draws_the_leaderboard_and_filters_change_it(logged_in, live_server):
    page = logged_in
    data.demo(slots=12)
    page.goto(f"{live_server.url}/")
    assert_drawn(drawn_charts(page), ["chart-board-ttft", "chart-board-decode"])
    assert board_order(page) == [r.slug for r in leaderboard(BoardFilters())]
    assert "simulated" in page.inner_text('#leaderboard tr[data-slug="sim-gpu"]')
    screenshot(page, "leaderboard")

    samples_72h = page.inner_text('#leaderboard tr[data-slug="wafer-llama-70b"] .c-samples')
    page.select_option("select[name=window]", "24h")
    page.click(".filters button[type=submit]")
    page.wait_for_url(re.compile(r"window=24h"))
    samples_24h = page.inner_text('#leaderboard tr[data-slug="wafer-llama-70b"] .c-samples')
    expected = leaderboard(BoardFilters(window_hours=24))
    assert int(samples_24h) == next(r.samples for r in expected if r.slug == "wafer-llama-70b")
    assert int(samples_24h) < int(samples_72h)

    page.click("#leaderboard thead a:has-text('TTFT p50')")
    page.wait_for_url(re.compile(r"sort=ttft"))
    assert "window=24h" in page.url  # sorting keeps the filters
    assert board_order(page) == [
        r.slug for r in leaderboard(BoardFilters(window_hours=24, sort="ttft"))
    ]

    response = page.goto(f"{live_server.url}/?window=5y")
    assert response.status == 400 and "window" in page.inner_text("main")
    screenshot(page, "bad-request")

    page.set_viewport_size({"width": 420, "height": 900})
    page.goto(f"{live_server.url}/")
    drawn_charts(page)
    screenshot(page, "leaderboard-narrow")


def test_it_draws_the_endpoint_page_and_drills_down_to_requests(logged_in, live_server):
    page = logged_in
    eps = data.demo(slots=12)
    page.goto(f"{live_server.url}/endpoints/gpu-llama-70b/?window=7d")
    charts = drawn_charts(page)
    assert_drawn(
        charts,
        [
            "chart-history-ttft",
            "chart-history-decode",
            "chart-tod",
            "chart-context",
            "chart-concurrency",
            "chart-roofline",
        ],
    )
    screenshot(page, "endpoint")
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/endpoints/gpu-llama-70b/?window=7d")
        drawn_charts(page)
        gaps = page.evaluate(LABEL_GAPS, "chart-history-ttft")
        assert gaps and min(gaps) >= 8, f"time-axis labels touch at {width} px: gaps {gaps}"
        screenshot(page, f"endpoint-{width}")

    latest = Run.objects.filter(endpoint=eps["gpu-llama-70b"], samples__isnull=False).first()
    page.click(f'a[href="/runs/{latest.id}/"]')
    page.wait_for_url(re.compile(rf"/runs/{latest.id}/$"))
    assert_drawn(drawn_charts(page), ["chart-waterfall"])
    title, ticks = page.evaluate(WATERFALL_AXIS)
    # The ticks carry their unit (ms below a second, s above): the title must not say "ms".
    assert not title.startswith("ms"), f"the axis says {title!r} under ticks {ticks}"
    assert page.locator("#samples tbody tr").count() == latest.samples.count()
    screenshot(page, "run")


def test_it_plots_speed_against_price_and_toggles_to_ttft(logged_in, live_server):
    page = logged_in
    data.demo(slots=6, with_samples=False)
    # Cheapest of all, quick to answer but slow to decode: on one frontier, not the other's.
    cheap = data.endpoint(data.provider("budget"), "budget-8b", price_in=0.1, price_out=0.5)
    data.series(cheap, ttft_ms=[300] * 6, decode_tps=[30] * 6)
    page.goto(f"{live_server.url}/price/")
    assert_drawn(drawn_charts(page), ["chart-price"])
    title = "() => Object.values(Chart.instances)[0].options.scales.y.title.text"
    assert "Decode" in page.evaluate(title)
    screenshot(page, "price")
    page.click("[data-y=ttft]")
    assert "TTFT" in page.evaluate(title)
    assert "y=ttft" in page.url
    rows = [r.as_dict() for r in leaderboard(BoardFilters()) if r.has_data]
    expected = pareto_frontier(
        rows, price="price_out_per_mtok", speed="ttft_p50_ms", higher_is_better=False
    )
    marked = page.eval_on_selector_all(
        "#price-table tbody tr",
        "rows => rows.filter(r => r.querySelector('.frontier').textContent.trim())"
        ".map(r => r.dataset.slug)",
    )
    assert sorted(marked) == sorted(p["slug"] for p in expected)
    assert "gpu-llama-70b" not in marked  # cheaper than wafer but slower to first token
    screenshot(page, "price-ttft")


def test_it_answers_the_agent_loop_calculator(logged_in, live_server):
    page = logged_in
    data.demo(slots=6, with_samples=False)
    page.goto(f"{live_server.url}/agent-loop/")
    assert_drawn(drawn_charts(page), ["chart-agent-loop"])
    screenshot(page, "agent-loop")

    page.fill("#id_calls", "4")
    page.fill("#id_tokens_per_call", "150")
    page.fill("#id_tool_s", "1.5")
    page.click("#calculator button[type=submit]")
    page.wait_for_url(re.compile(r"calls=4"))
    fastest = project(leaderboard(BoardFilters()), calls=4, tokens_per_call=150, tool_s=1.5)[0]
    answer = page.inner_text("#answer")
    assert fastest["label"] in answer and f"{fastest['wall_s']:.2f} s" in answer
    assert_drawn(drawn_charts(page), ["chart-agent-loop"])

    page.fill("#id_calls", "0")
    assert page.eval_on_selector("#id_calls", "e => e.validationMessage")  # the browser objects
    response = page.goto(f"{live_server.url}/agent-loop/?calls=0")
    assert response.status == 400 and "calls:" in page.inner_text("#calculator")


def test_it_compares_endpoints_on_every_chart(logged_in, live_server):
    page = logged_in
    data.demo(slots=9, with_samples=False)
    page.goto(f"{live_server.url}/compare/")
    page.check('input[name=e][value="wafer-llama-70b"]')
    page.check('input[name=e][value="gpu-llama-70b"]')
    page.check('input[name=e][value="sim-gpu"]')
    page.click("#compare-picker button[type=submit]")
    page.wait_for_url(re.compile(r"e=.*e=.*e="))
    charts = drawn_charts(page)
    assert_drawn(
        charts,
        [
            "chart-cmp-ttft",
            "chart-cmp-decode",
            "chart-cmp-tod-ttft",
            "chart-cmp-tod-decode",
            "chart-cmp-context",
            "chart-cmp-concurrency",
            "chart-cmp-agent",
        ],
    )
    lines = page.evaluate(
        "() => Object.values(Chart.instances).find(c => c.canvas.id === 'chart-cmp-ttft')"
        ".data.datasets.length"
    )
    assert lines == 3
    screenshot(page, "compare")
