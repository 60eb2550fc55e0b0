"""The advice on a custom workload in Chromium at 1366 and 390 px: refused (403) to a viewer
without the role, then, once granted, ranked by the workload's own runs with its basis and the
endpoint it has not run on. Screenshots: advisor-custom-1366.png, advisor-custom-390.png."""

from datetime import datetime

import pytest
import time_machine
from django.contrib.auth.models import Permission, User

from tests import custom_advice_data as world_data
from tests import custom_workload_data as text

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
NOW = "2026-06-15 10:20:00+00:00"


@time_machine.travel(NOW, tick=True)
def test_a_member_sees_the_advice_on_the_teams_workload(logged_in, live_server):
    page = logged_in
    world_data.world(now=datetime.fromisoformat(NOW))
    url = f"{live_server.url}/advisor/support/"
    assert page.goto(url).status == 403
    page.goto(f"{live_server.url}/advisor/")
    assert page.locator('#profiles tr[data-profile="support"]').count() == 0

    viewer = User.objects.get(username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_prompt_text"))
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.goto(url).status == 200
        assert page.inner_text("#measured-on").startswith("Measured on Support agent (12 prompts")
        rows = page.eval_on_selector_all("#advice tbody tr", "r => r.map(x => x.dataset.slug)")
        assert rows == ["quick", "steady"]
        assert page.inner_text('#not-measured li[data-slug="unrun"]').startswith(
            "Unrun @ Unrunco: no run of Support agent"
        )
        assert text.TEXT_MARK not in page.content()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(page, f"advisor-custom-{width}")
