"""The monthly report in Chromium: reached from the nav, it fits a laptop's 1366 px and a
phone's 390 px (its wide table scrolls inside its frame), and moves between months."""

import pytest
import time_machine

from tests import monthly_data

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


@time_machine.travel(monthly_data.NOW, tick=True)
def test_it_fits_the_monthly_report_on_a_laptop_and_a_phone(page, live_server, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    seeded = monthly_data.seed_year(days=40)
    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="Monthly").click()
    page.wait_for_url("**/reports/monthly/2026-06/")
    assert page.locator("h1").inner_text() == "Monthly report, June 2026"
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_load_state("networkidle")
        assert page.evaluate(OVERFLOW) <= 0, f"the report is wider than {width} px"
        assert page.locator("#monthly-endpoints tbody tr").count() == len(seeded["endpoints"])
        assert page.locator("#monthly-workloads").get_by_text("Acme support").is_visible()
        screenshot(page, f"monthly-report-{width}")
    page.get_by_role("link", name="← May 2026").click()
    page.wait_for_url("**/reports/monthly/2026-05/")
    assert page.get_by_role("link", name="June 2026 →").is_visible()
