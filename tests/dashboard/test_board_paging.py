"""The leaderboard page lists the top rows of a long board, ranked over every endpoint, and
every endpoint one click away."""

import re

import pytest
from django.contrib.auth.models import User

from dashboard.views.listing import PAGE_ROWS
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowded(client):
    """PAGE_ROWS endpoints without runs yet, then a slow and a fast one measured (made last,
    so only a sort over every endpoint puts them first)."""
    data.default_workloads()
    data.vantage()
    client.force_login(User.objects.create_user("ana"))
    bulk = data.provider("bulk")
    for number in range(PAGE_ROWS):
        data.endpoint(bulk, f"quiet-{number:03d}")
    slot = data.recent_slots(1)[0]
    for slug, tps in (("slow", 10.0), ("fast", 900.0)):
        data.run(data.endpoint(data.provider(f"{slug}co"), slug), slot, decode_tps=tps)
    return client


def rows_of(html: str) -> list[str]:
    return re.findall(r'<tr data-slug="([^"]+)"', html)


def test_it_lists_the_top_rows_of_every_endpoint_and_the_rest_one_click_away(crowded):
    html = crowded.get("/").content.decode()
    rows = rows_of(html)
    assert len(rows) == PAGE_ROWS
    assert rows[:2] == ["fast", "slow"]  # ranked over every endpoint, not the first listed
    total = PAGE_ROWS + 2
    link = re.search(r'<a href="\?([^"]+)">Show all (\d+) endpoints</a>', html)
    assert link and int(link.group(2)) == total

    every = crowded.get("/?" + link.group(1).replace("&amp;", "&")).content.decode()
    assert len(rows_of(every)) == total
    assert "Show all" not in every
    assert "rows=all" in re.search(r'<a href="([^"]*sort=ttft[^"]*)"', every).group(1)


def test_it_refuses_a_rows_value_it_does_not_know(crowded):
    response = crowded.get("/", {"rows": "many"})
    assert response.status_code == 400
    assert "rows: use" in response.content.decode()
