"""The price and agent-loop pages list the first rows of their order (every endpoint ranked) and
every row one click away (`rows=all`): their tables no longer grow with the fleet."""

import json
import re

import pytest
from django.contrib.auth.models import User

from dashboard.views import listing
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db
SHOWN = 3


@pytest.fixture
def user_client(client):
    client.force_login(User.objects.create_user("ana"))
    return client


@pytest.fixture
def fleet(monkeypatch):
    """Five measured endpoints: the dearer, the slower (so price and speed orders agree)."""
    data.default_workloads()
    data.vantage()
    acme = data.provider("acme")
    for number in range(5):
        endpoint = data.endpoint(acme, f"acme-{number}", price_out=2.0 + number)
        data.series(endpoint, ttft_ms=[200.0 + 100 * number] * 3, decode_tps=[90.0 - number] * 3)
    monkeypatch.setattr(listing, "PAGE_ROWS", SHOWN)
    return [f"acme-{number}" for number in range(5)]


def table_slugs(html: str, table_id: str) -> list[str]:
    table = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-slug="([^"]+)"', table)


def show_all_link(html: str) -> str:
    return re.search(r'<a href="\?([^"]*rows=all[^"]*)">Show all 5 endpoints</a>', html)[1]


def test_the_price_page_lists_the_cheapest_and_plots_every_endpoint(user_client, fleet):
    html = user_client.get("/price/", {"y": "ttft"}).content.decode()
    assert table_slugs(html, "price-table") == fleet[:SHOWN]
    chart = json.loads(html.split('id="price-data"', 1)[1].split(">", 1)[1].split("</script>")[0])
    assert sorted(point["slug"] for point in chart["points"]) == fleet
    query = show_all_link(html).replace("&amp;", "&")
    assert "y=ttft" in query
    every = user_client.get(f"/price/?{query}").content.decode()
    assert table_slugs(every, "price-table") == fleet
    assert "Show all" not in every
    assert 'name="rows" value="all"' in every  # the filter bar keeps every row listed


def test_the_agent_loop_page_lists_the_fastest_and_names_the_fastest_of_all(user_client, fleet):
    html = user_client.get("/agent-loop/", {"calls": 3}).content.decode()
    assert table_slugs(html, "projections") == fleet[:SHOWN]
    assert "fastest is <strong>Acme 0</strong>" in html
    query = show_all_link(html).replace("&amp;", "&")
    assert "calls=3" in query
    every = user_client.get(f"/agent-loop/?{query}").content.decode()
    assert table_slugs(every, "projections") == fleet
    assert 'name="rows" value="all"' in every


@pytest.mark.parametrize("path", ["/price/?rows=10", "/agent-loop/?rows=some"])
def test_a_rows_value_other_than_all_is_a_400_naming_it(user_client, fleet, path):
    response = user_client.get(path)
    assert response.status_code == 400
    assert "rows:" in response.content.decode()
