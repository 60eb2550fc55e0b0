"""Credentials never stored: one check of extra headers for the admin and the API; the headers
are shown to staff only."""

import json

import pytest

from providers.models import Provider
from tests.api_factories import make_provider

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]

CREDENTIALS = [
    {"Authorization": "Bearer sk-live-123"},
    {"authorization": "anything"},
    {"X-Api-Key": "k"},
    {"api-key": "k"},
    {"x-goog-api-key": "AIzaSyA-1234567890abcdefghijklmnopqrstu"},
    {"Proxy-Authorization": "Basic dXNlcjpwYXNz"},
    {"Cookie": "session=abc"},
    {"X-Custom": "Bearer sk-abc"},
    {"X-Custom": "sk-proj-abcdefghijklmnopqrstuvwx"},
]


def admin_form(headers: dict) -> dict:
    return {
        "name": "Newco",
        "slug": "newco",
        "protocol": "openai_chat",
        "base_url": "https://newco.example/v1",
        "api_key_env": "NEWCO_API_KEY",
        "extra_headers": json.dumps(headers),
        "enabled": "on",
        "endpoints-TOTAL_FORMS": "0",
        "endpoints-INITIAL_FORMS": "0",
        "endpoints-MIN_NUM_FORMS": "0",
        "endpoints-MAX_NUM_FORMS": "1000",
    }


@pytest.mark.parametrize("headers", CREDENTIALS)
def test_it_refuses_credentials_in_extra_headers_in_the_admin(client, admin_user, headers):
    client.force_login(admin_user)
    response = client.post("/admin/providers/provider/add/", admin_form(headers))
    assert response.status_code == 200  # the form again, with the error
    assert "never stored by tokspeed" in response.content.decode()
    assert not Provider.objects.exists()


def test_it_saves_harmless_extra_headers_in_the_admin(client, admin_user):
    client.force_login(admin_user)
    headers = {"anthropic-beta": "prompt-caching-2024-07-31", "X-Title": "tokspeed"}
    response = client.post("/admin/providers/provider/add/", admin_form(headers))
    assert response.status_code == 302
    assert Provider.objects.get(slug="newco").extra_headers == headers


@pytest.mark.parametrize("headers", CREDENTIALS)
def test_it_refuses_the_same_credentials_in_the_api(staff, headers):
    body = {
        "slug": "newco",
        "name": "Newco",
        "protocol": "openai_chat",
        "base_url": "https://newco.example/v1",
        "api_key_env": "NEWCO_API_KEY",
        "extra_headers": headers,
    }
    response = staff.post("/api/v1/providers/", body, format="json")
    assert response.status_code == 400
    assert "never stored by tokspeed" in response.json()["extra_headers"][0]
    assert not Provider.objects.exists()


def test_it_shows_extra_headers_to_staff_only(staff, reader, anon, public):
    make_provider("acme", extra_headers={"X-Title": "tokspeed"})
    assert staff.get("/api/v1/providers/acme/").json()["extra_headers"] == {"X-Title": "tokspeed"}
    for client in (reader, anon):
        listed = client.get("/api/v1/providers/").json()["results"][0]
        assert listed["slug"] == "acme" and "extra_headers" not in listed
        assert "extra_headers" not in client.get("/api/v1/providers/acme/").json()
