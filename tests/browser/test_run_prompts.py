"""A prompt suite's run page in Chromium, as a member allowed to read the prompts sees it at
1366 and 390 px: one row per prompt with its figures, each prompt's number and first figures in
view on a phone (its text wraps under the number instead of pushing them off the screen)."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import Permission
from django.db import connection

from benchmarks import runner
from benchmarks.models import RunStatus
from tests.benchmarks.test_custom_workload import KEY_ENV, custom_run, custom_workload
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options
from tests.custom_workload_data import prompt_suite

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def execute(run_id: int) -> str:
    """The runner in a thread of its own, closing the connection it opened there."""
    try:
        return runner.execute(run_id, worker="t")
    finally:
        connection.close()


OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"
# Where each row's first two cells (prompt number, requests) end, from the viewport's left.
CELL_RIGHTS = """() => [...document.querySelectorAll('#per-prompt tbody tr')].map(
  (tr) => [...tr.cells].slice(0, 2).map((td) => td.getBoundingClientRect().right))"""


def test_it_shows_each_prompts_figures_on_a_laptop_and_a_phone(
    logged_in, live_server, simulator, tmp_path, monkeypatch, django_user_model
):
    monkeypatch.setenv(KEY_ENV, "sim-key")
    run = custom_run(simulator, "openai_chat", custom_workload(), concurrency=2, repetitions=6)
    # Playwright's event loop runs in this thread; the runner starts its own in another.
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)), ThreadPoolExecutor(1) as pool:
        assert pool.submit(execute, run.id).result() == RunStatus.DONE
    run.refresh_from_db()
    viewer = django_user_model.objects.get(username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_prompt_text"))
    page = logged_in
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/runs/{run.id}/")
        rows = page.locator("#per-prompt tbody tr")
        assert rows.count() == 12
        for i, figures in enumerate(run.summary["prompts"]):
            cells = rows.nth(i).locator("td")
            assert cells.nth(0).inner_text().startswith(f"{i + 1}\n{prompt_suite(12)[i][:30]}")
            assert cells.nth(1).inner_text() == f"{figures['ok']} / {figures['samples']}"
            assert cells.nth(5).inner_text() == f"{figures['input_tokens']:,.0f}"
        shape = page.locator("#workload-shape").inner_text()
        assert "system prompt 20,000 characters · context 3,000 tokens of document" in shape
        assert page.evaluate(OVERFLOW) <= 0, f"the run page is wider than {width} px"
        for number, requests in page.evaluate(CELL_RIGHTS):
            assert number <= width and requests <= width, (
                f"a prompt's figures are off screen at {width} px"
            )
        screenshot(page, f"run-prompts-{width}")
