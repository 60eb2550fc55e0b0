"""The channels page as an operator sees it at 1366 and 390 px: every row and the new-channel form
fit the screen, a broken channel says why in words, every action is legible, and "Send test
notification" posts to the receiver. Screenshots: channels-1366.png, channels-390.png,
channel-new-390.png."""

import secrets

import pytest
from django.test import override_settings

from alerts.delivery.channels.testing import send_test
from alerts.models import Service, Topic
from tests.alerts.test_alert_channels import SLACK, channel
from tests.alerts.test_alert_emails import BASE_URL, make_series
from tests.channel_receivers import receivers

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
# WCAG's contrast ratio of an element's text against the first opaque background behind it.
CONTRAST = """(el) => {
  const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => {
    v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }).reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  let back = el;
  while (back && rgb(getComputedStyle(back).backgroundColor).concat([1])[3] === 0) {
    back = back.parentElement;
  }
  const fore = lum(rgb(getComputedStyle(el).color));
  const behind = lum(rgb(back ? getComputedStyle(back).backgroundColor : "rgb(255,255,255)"));
  return (Math.max(fore, behind) + 0.05) / (Math.min(fore, behind) + 0.05);
}"""


def login(page, live_server, django_user_model) -> None:
    password = secrets.token_urlsafe(12)
    django_user_model.objects.create_superuser("op", "op@team.example", password)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "op")
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_it_shows_channels_their_health_and_the_test_button_on_a_laptop_and_a_phone(
    page, live_server, django_user_model, monkeypatch, tmp_path
):
    with (
        receivers(monkeypatch, tmp_path) as rx,
        override_settings(TOKSPEED_BASE_URL=BASE_URL, CHANNELS_BROKEN_AFTER=1),
    ):
        slack = channel(Service.SLACK, SLACK, name="Team Slack", topics=[Topic.REGRESSION])
        pager = channel(Service.PAGERDUTY, "R0UT1NGKEY0123456789abcdef", name="Production pager",
                        topics=[Topic.OUTAGE])  # fmt: skip
        pager.endpoints.add(make_series()["endpoint"])
        rx.script["/pagerduty/"] = [404]
        send_test(pager)
        login(page, live_server, django_user_model)
        for width in (1366, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{live_server.url}/alerts/channels/")
            assert page.evaluate(OVERFLOW) <= 0, f"the channels page is wider than {width} px"
            broken = page.locator("#channels tr.broken").inner_text()
            assert "Broken since" in broken and "HTTP 404 from PagerDuty" in broken, broken
            assert "ChannelFailed" not in broken, "the error in words, not a Python class name"
            for action in page.locator("#channels .row-actions button, #channels .row-actions a")\
                    .all():  # fmt: skip
                box = action.bounding_box()
                assert box["x"] + box["width"] <= width, f"{action.inner_text()} is off screen"
                ratio = action.evaluate(CONTRAST)
                assert ratio >= 4.5, f"“{action.inner_text()}” is hard to read ({ratio:.1f}:1)"
            screenshot(page, f"channels-{width}")
            page.goto(f"{live_server.url}/alerts/channels/new/")
            assert page.evaluate(OVERFLOW) <= 0, f"the new-channel form is wider than {width} px"
        screenshot(page, "channel-new-390")

        page.goto(f"{live_server.url}/alerts/channels/")
        page.click(f"form[action='/alerts/channels/{slack.id}/test/'] button")
        assert "Test notification sent to “Team Slack”" in page.inner_text(".messages")
        (post,) = rx.at("/slack/")
        assert "Team Slack" in str(post.json), "the receiver got the test message"
