"""The client-saturation mark on the leaderboard and the endpoint page, at a laptop's 1366 px
and a phone's 390 px: visible, inside its cell and the screen, the page no wider than the screen,
and absent on a row whose runs were not saturated."""

import os
from datetime import UTC
from pathlib import Path

import pytest

from benchmarks.models import Run
from benchmarks.rollups.write import rebuild
from tests import dashboard_data as data

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
SHOTS = Path(os.environ.get("TOKSPEED_SATURATION_SHOTS", "artifacts/screenshots"))
SATURATED = "gpu-llama-70b"


def inside(inner: dict, outer: dict) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.5
        and inner["y"] >= outer["y"] - 0.5
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


def test_it_shows_the_saturation_mark_legibly_at_1366_and_390(page, live_server, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    data.demo(slots=6, with_samples=True)
    runs = Run.objects.filter(endpoint__slug=SATURATED, workload__slug="base").order_by("slot")
    Run.objects.filter(id__in=list(runs.values_list("id", flat=True)[:2])).update(saturated_count=2)
    total = runs.count()
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for name, path, cell in (
            ("board", "/", f'#leaderboard tr[data-slug="{SATURATED}"] td.c-decode'),
            ("endpoint", f"/endpoints/{SATURATED}/", ".stat:has(.value.decode)"),
        ):
            page.goto(f"{live_server.url}{path}")
            page.wait_for_load_state("networkidle")
            assert page.evaluate(OVERFLOW) <= 0, f"{path} is wider than {width} px"
            mark = page.locator(f"{cell} .saturated-note")
            assert mark.inner_text() == f"client saturated in 2 of {total} runs"
            assert mark.is_visible()
            box = mark.bounding_box()
            assert inside(box, page.locator(cell).bounding_box()), (width, path)
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (width, path)
            assert mark.evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 11
            page.screenshot(path=str(SHOTS / f"saturation-{name}-{width}.png"), full_page=True)
        page.goto(f"{live_server.url}/")
        others = page.locator(f'#leaderboard tr:not([data-slug="{SATURATED}"]) .saturated-note')
        assert others.count() == 0, "only the saturated endpoint's row is marked"


# The decode history chart's own line (the last dataset): each point's style and tooltip note.
DECODE_POINTS = """() => {
  const chart = Chart.getChart("chart-history-decode");
  const last = chart.data.datasets.length - 1, ds = chart.data.datasets[last];
  const note = chart.options.plugins.tooltip.callbacks.afterLabel;
  return ds.data.map((_, i) => [ds.pointStyle[i], note({ datasetIndex: last, dataIndex: i })]);
}"""


def test_it_marks_a_saturated_day_on_the_decode_history_chart(page, live_server, settings):
    """Over 90 days a point is a day of runs: a day with saturated runs is an amber triangle
    whose tooltip counts them."""
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    data.demo(slots=6, with_samples=False)
    runs = Run.objects.filter(endpoint__slug=SATURATED, workload__slug="base").order_by("slot")
    saturated = runs.last()
    Run.objects.filter(id=saturated.id).update(saturated_count=2)
    rebuild()
    day = saturated.slot.astimezone(UTC).date()  # the day rollups' day
    on_that_day = sum(run.slot.astimezone(UTC).date() == day for run in runs)

    page.goto(f"{live_server.url}/endpoints/{SATURATED}/?window=365d")
    page.wait_for_function("() => window.Chart && Chart.getChart('chart-history-decode')")
    points = page.evaluate(DECODE_POINTS)

    marked = [note for style, note in points if style == "triangle"]
    assert marked == [f"client saturated in 1 of {on_that_day} runs"], points
    assert all(note == "" for style, note in points if style != "triangle")
