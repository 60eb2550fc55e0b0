"""/api/v1/advice/'s `limit`: `results` lists the first N ranked endpoints, `count` all of them,
and everything else in the answer stands on every ranked endpoint."""

import html
import json
import re

import pytest

from dashboard.api.views import advice as advice_view
from dashboard.views import listing

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("at_seed_now")]


def advice(reader, **query) -> dict:
    response = reader.get("/api/v1/advice/", {"profile": "chat", **query})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_limit_lists_the_first_ranked_endpoints_and_counts_them_all(reader, world):
    every = advice(reader, limit="all")
    first_two = advice(reader, limit=2)
    assert [r["endpoint"] for r in every["results"]] == ["fast", "lonely", "cheap"]
    assert first_two["results"] == every["results"][:2]  # the same rows, ranks and figures
    assert first_two["count"] == every["count"] == 3
    assert (first_two["limit"], every["limit"]) == (2, None)
    # The rest stands on every ranked endpoint, listed or not: "cheap" is the current one.
    for key in ("recommended", "reason", "savings", "time_of_day", "lanes", "basis", "warnings"):
        assert first_two[key] == every[key], key
    assert first_two["savings"]["current"] == "cheap"
    assert any("1 of 3 ranked endpoints" in w for w in first_two["warnings"])


def test_the_answer_lists_the_default_number_without_a_limit(reader, world, monkeypatch):
    monkeypatch.setattr(advice_view, "LIMIT", 1)
    body = advice(reader)
    assert [r["endpoint"] for r in body["results"]] == ["fast"]
    assert (body["count"], body["limit"]) == (3, 1)
    assert len(advice(reader, limit="all")["results"]) == 3, "limit=all answered the cached page"


def test_each_limit_has_its_own_cached_answer_and_etag(reader, world):
    one = reader.get("/api/v1/advice/", {"profile": "chat", "limit": 1})
    two = reader.get("/api/v1/advice/", {"profile": "chat", "limit": 2})
    assert len(one.json()["results"]) == 1 and len(two.json()["results"]) == 2
    assert one["ETag"] != two["ETag"]
    again = reader.get(
        "/api/v1/advice/", {"profile": "chat", "limit": 2}, HTTP_IF_NONE_MATCH=one["ETag"]
    )
    assert again.status_code == 200, "another page's tag answered 304"


def test_router_feeds_list_every_ranked_endpoint_whatever_the_limit(reader, world):
    plain = reader.get("/api/v1/advice/", {"profile": "chat", "format": "list", "limit": 1})
    assert plain.json() == ["fast", "lonely", "cheap"]


@pytest.mark.parametrize("limit", ["0", "-1", "1001", "ten", "2.5", "ALL", "1e3", "²"])
def test_a_bad_limit_is_a_400_naming_it(reader, world, limit):
    for query in ({"limit": limit}, {"limit": limit, "format": "list"}):
        response = reader.get("/api/v1/advice/", {"profile": "chat", **query})
        assert response.status_code == 400
        assert "limit" in json.dumps(response.json())


def test_the_page_lists_the_first_rows_and_links_to_all_of_them(
    client, django_user_model, world, monkeypatch
):
    monkeypatch.setattr(listing, "PAGE_ROWS", 2)
    client.force_login(django_user_model.objects.create_user("bob"))
    page = client.get("/advisor/chat/", {"budget_s": 20}).content.decode()
    table = page.split('id="advice"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<tr data-slug="([^"]+)"', table) == ["fast", "lonely"]
    assert "The first 2 of 3 ranked endpoints" in page and "Show all 3 endpoints" in page
    link = re.search(r'id="advice-more">[^<]*<a href="\?([^"]+)"', page).group(1)
    every = client.get(f"/advisor/chat/?{html.unescape(link)}").content.decode()
    table = every.split('id="advice"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<tr data-slug="([^"]+)"', table) == ["fast", "lonely", "cheap"]
    assert "budget_s=20" in html.unescape(link), "the link dropped the question"
    assert "Show all" not in every
    # The page's JSON link asks the API (which refuses `rows`) the same question.
    api = html.unescape(re.search(r'id="feeds"><a href="([^"]+)"', every).group(1))
    assert "rows" not in api and client.get(api).status_code == 200
    assert client.get("/advisor/chat/", {"rows": "some"}).status_code == 400
