"""The monthly report in Chromium: reached from the nav, it fits a laptop's 1366 px and a
phone's 390 px (its wide table scrolls inside its frame), and moves between months; its email
fits both widths too."""

import pytest
import time_machine

from alerts.models import Notification
from alerts.monthly.month import Month
from alerts.monthly.report import build
from alerts.monthly.send import monthly_email
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


@time_machine.travel(monthly_data.NOW, tick=True)
def test_it_fits_the_monthly_email_on_a_laptop_and_a_phone(page):
    """The email as a mail client shows it: every endpoint's figures readable at 390 px without
    scrolling sideways (it was an eleven-column table 781 px wide)."""
    seeded = monthly_data.seed_year(days=40)
    june = Month(2026, 6)
    message = monthly_email(Notification(email="ana@team.example", report_month=june.first_day))
    [(html, _)] = message.alternatives
    page.set_content(html)
    shown = build(june).endpoints
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate(OVERFLOW) <= 0, f"the email is wider than {width} px"
        cards = page.locator("table[data-endpoint]")
        assert cards.count() == len(shown) == len(seeded["endpoints"])
        for endpoint in shown:
            assert cards.get_by_text(endpoint.label).first.is_visible()
        figure = cards.first.get_by_text(f"{shown[0].month.decode_tps_p50:,.1f} tok/s").first
        box = figure.bounding_box()
        assert figure.is_visible() and box["x"] + box["width"] <= width, box
        screenshot(page, f"monthly-email-{width}")
