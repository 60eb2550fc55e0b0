"""The advisor in Chromium: the answer per profile, the ranked table, the JSON API and its ETag
from the page's session, and the staff button queuing the missing runs. Screenshot: advisor.png."""

import pytest
import time_machine
from django.contrib.auth.models import User
from django.utils import timezone

from benchmarks.models import Run
from tests import advisor_data as seed

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
# Pinned (and ticking): the advice reads time-of-day buckets and the age of the newest run.
NOW = "2026-06-15 10:20:00+00:00"

FETCH = """async (etag) => {
  const r = await fetch('/api/v1/advice/?profile=chat',
                        {headers: etag ? {'If-None-Match': etag} : {}});
  return {status: r.status, etag: r.headers.get('ETag'),
          body: r.status === 200 ? await r.json() : null};
}"""


@time_machine.travel(NOW, tick=True)
def test_it_shows_the_advice_and_serves_it_as_json(logged_in, live_server):
    page = logged_in
    profile, *_ = seed.world(now=timezone.now())
    page.goto(f"{live_server.url}/advisor/")
    row = page.locator('#profiles tr[data-profile="chat"]')
    assert row.locator(".recommended").inner_text() == "Fast @ Fastco"
    row.locator("a").first.click()
    page.wait_for_url(f"{live_server.url}/advisor/chat/")
    assert page.inner_text("#reason").startswith("Fast @ Fastco: p90 task 2.3 s, inside the 10 s")
    slugs = page.eval_on_selector_all("#advice tbody tr", "rows => rows.map(r => r.dataset.slug)")
    assert slugs == ["fast", "lonely", "cheap"]
    assert "Switching from Cheap @ Cheapco" in page.inner_text("#savings")
    assert "Thin data" in page.inner_text("#warnings")
    assert page.locator("#feeds a[data-format=litellm]").count() == 1
    screenshot(page, "advisor")

    first = page.evaluate(FETCH, None)
    assert first["status"] == 200 and first["body"]["recommended"] == "fast"
    assert page.evaluate(FETCH, first["etag"])["status"] == 304


@time_machine.travel(NOW, tick=True)
def test_it_lets_staff_queue_the_runs_a_shape_lacks(logged_in, live_server):
    page = logged_in
    profile, *_ = seed.world(now=timezone.now())
    profile.concurrency = 10
    profile.save()
    page.goto(f"{live_server.url}/advisor/chat/")
    assert page.locator("#measure-missing").count() == 0  # not staff
    assert (
        page.locator('#not-measured li[data-slug="fast"]')
        .inner_text()
        .startswith("Fast @ Fastco: no concurrency run")
    )
    User.objects.filter(username="viewer").update(is_staff=True)
    page.reload()
    before = Run.objects.count()
    page.click("#measure-missing button")
    page.wait_for_url(f"{live_server.url}/advisor/chat/")
    assert "Queued 3 runs" in page.inner_text(".messages")
    assert Run.objects.count() == before + 3
