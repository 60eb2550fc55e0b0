"""REST API: providers and endpoints — reads, staff writes, and keys that never get in or out."""

import pytest

from providers.models import Endpoint, Provider
from tests.api_factories import make_endpoint, make_provider, token_client

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]

NEW_PROVIDER = {
    "slug": "newco",
    "name": "NewCo",
    "protocol": "anthropic_messages",
    "base_url": "https://api.newco.example/v1",
    "api_key_env": "NEWCO_API_KEY",
}


def test_it_lists_providers_with_the_key_variable_name_only(reader, monkeypatch):
    secret = "sk-live-do-not-leak-4242"  # noqa: S105 (a fake key the API must not echo)
    monkeypatch.setenv("ACME_API_KEY", secret)
    make_provider("acme", api_key_env="ACME_API_KEY")
    make_endpoint(Provider.objects.get(slug="acme"))
    response = reader.get("/api/v1/providers/")
    assert response.status_code == 200
    (item,) = response.json()["results"]
    assert item["api_key_env"] == "ACME_API_KEY"
    assert item["key_configured"] is True
    assert item["endpoint_count"] == 1
    assert secret not in response.content.decode()


def test_it_says_when_the_key_variable_is_not_set(reader, monkeypatch):
    monkeypatch.delenv("MISSING_KEY_VAR", raising=False)
    make_provider("acme", api_key_env="MISSING_KEY_VAR")
    assert reader.get("/api/v1/providers/acme/").json()["key_configured"] is False


def test_it_lets_staff_create_update_and_delete_a_provider(staff):
    created = staff.post("/api/v1/providers/", NEW_PROVIDER, format="json")
    assert created.status_code == 201, created.json()
    assert Provider.objects.get(slug="newco").api_key_env == "NEWCO_API_KEY"
    patched = staff.patch("/api/v1/providers/newco/", {"enabled": False}, format="json")
    assert patched.status_code == 200
    assert Provider.objects.get(slug="newco").enabled is False
    assert staff.delete("/api/v1/providers/newco/").status_code == 200
    assert Provider.objects.get(slug="newco").archived_at is not None  # archived, not erased


def test_it_refuses_writes_from_readers_and_anonymous_callers(reader, anon, private):
    assert reader.post("/api/v1/providers/", NEW_PROVIDER, format="json").status_code == 403
    response = anon.post("/api/v1/providers/", NEW_PROVIDER, format="json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert not Provider.objects.filter(slug="newco").exists()


def test_it_lets_a_staff_token_write(staff_user):
    response = token_client(staff_user).post("/api/v1/providers/", NEW_PROVIDER, format="json")
    assert response.status_code == 201


@pytest.mark.parametrize("field", ["api_key", "key", "token", "apiKey", "x-api-key", "secret"])
def test_it_refuses_a_key_in_the_body_and_says_where_it_belongs(staff, field):
    body = NEW_PROVIDER | {field: "sk-should-never-be-stored"}
    response = staff.post("/api/v1/providers/", body, format="json")
    assert response.status_code == 400
    message = response.json()[field][0]
    assert "NEWCO_API_KEY" in message and "api_key_env" in message
    assert "sk-should-never-be-stored" not in response.content.decode()
    assert not Provider.objects.filter(slug="newco").exists()


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer sk-abc"},
        {"x-api-key": "sk-abc"},
        {"X-Goog-Api-Key": "abc"},
        {"X-Custom": "Bearer sk-abc"},
    ],
)
def test_it_refuses_keys_in_extra_headers(staff, headers):
    response = staff.post(
        "/api/v1/providers/", NEW_PROVIDER | {"extra_headers": headers}, format="json"
    )
    assert response.status_code == 400
    assert "api_key_env" in response.json()["extra_headers"][0]


def test_it_keeps_harmless_extra_headers(staff):
    body = NEW_PROVIDER | {"extra_headers": {"anthropic-version": "2023-06-01"}}
    assert staff.post("/api/v1/providers/", body, format="json").status_code == 201
    assert Provider.objects.get(slug="newco").extra_headers == {"anthropic-version": "2023-06-01"}


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://api.newco.example/", "http"),
        ("https://user:pw@api.newco.example/v1", "credentials"),
        ("https://api.newco.example/v1?key=AIza123", "api_key_env"),
        ("not a url", "URL"),
    ],
)
def test_it_validates_the_base_url(staff, url, words):
    response = staff.post("/api/v1/providers/", NEW_PROVIDER | {"base_url": url}, format="json")
    assert response.status_code == 400
    assert words in " ".join(response.json()["base_url"])


def test_it_refuses_a_private_address_unless_allowed(staff, settings):
    settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = False
    body = NEW_PROVIDER | {"base_url": "http://127.0.0.1:8000/v1"}
    response = staff.post("/api/v1/providers/", body, format="json")
    assert response.status_code == 400
    assert "TOKSPEED_ALLOW_PRIVATE_ENDPOINTS" in response.json()["base_url"][0]


def test_it_refuses_a_key_pasted_as_the_variable_name(staff):
    body = NEW_PROVIDER | {"api_key_env": "sk-proj-abc123"}
    response = staff.post("/api/v1/providers/", body, format="json")
    assert response.status_code == 400
    assert "NAME" in response.json()["api_key_env"][0]


def test_it_lists_endpoints_by_provider_with_roofline(reader):
    acme, other = make_provider("acme"), make_provider("other")
    make_endpoint(
        acme, "acme-big", active_params_b=70, bytes_per_param=2, chips=1, chip_bandwidth_tbps=3.35
    )
    make_endpoint(other, "other-small")
    response = reader.get("/api/v1/endpoints/", {"provider": "acme"})
    assert response.status_code == 200
    (item,) = response.json()["results"]
    assert item["slug"] == "acme-big" and item["provider"] == "acme"
    assert item["roofline_tps"] == pytest.approx(3.35e12 / (70e9 * 2))
    assert item["api_key_env"] == "" and item["key_configured"] is True


def test_it_names_an_unknown_provider_filter(reader):
    response = reader.get("/api/v1/endpoints/", {"provider": "nope"})
    assert response.status_code == 400
    assert "provider" in response.json()


def test_it_lets_staff_create_and_edit_an_endpoint(staff):
    make_provider("acme", api_key_env="ACME_API_KEY")
    body = {
        "slug": "acme-large",
        "provider": "acme",
        "model": "acme-large-2",
        "price_input_per_mtok": "0.5",
        "price_output_per_mtok": "1.5",
        "extra_body": {"temperature": 0},
    }
    response = staff.post("/api/v1/endpoints/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["api_key_env"] == "ACME_API_KEY"
    response = staff.patch("/api/v1/endpoints/acme-large/", {"peak_concurrency": 32}, format="json")
    assert response.status_code == 200
    assert Endpoint.objects.get(slug="acme-large").peak_concurrency == 32


def test_it_refuses_a_key_inside_an_endpoints_extra_body(staff):
    make_provider("acme", api_key_env="ACME_API_KEY")
    body = {
        "slug": "acme-large",
        "provider": "acme",
        "model": "m",
        "extra_body": {"metadata": {"api_key": "sk-123"}},
    }
    response = staff.post("/api/v1/endpoints/", body, format="json")
    assert response.status_code == 400
    assert "ACME_API_KEY" in response.json()["extra_body"][0]


def test_it_names_the_field_of_bad_endpoint_values(staff):
    make_provider("acme")
    body = {
        "slug": "x",
        "provider": "acme",
        "model": "m",
        "price_input_per_mtok": "-1",
        "peak_concurrency": 0,
    }
    response = staff.post("/api/v1/endpoints/", body, format="json")
    assert response.status_code == 400
    assert {"price_input_per_mtok", "peak_concurrency"} <= set(response.json())


def test_it_refuses_a_second_endpoint_for_the_same_model(staff):
    acme = make_provider("acme")
    make_endpoint(acme, "first", model="same-model")
    body = {"slug": "second", "provider": "acme", "model": "same-model"}
    response = staff.post("/api/v1/endpoints/", body, format="json")
    assert response.status_code == 400
    assert Endpoint.objects.filter(model="same-model").count() == 1


def test_it_refuses_a_null_character_in_a_slug_reference(staff):
    body = {"slug": "x", "provider": "ac\x00me", "model": "m"}
    response = staff.post("/api/v1/endpoints/", body, format="json")
    assert response.status_code == 400
    assert "provider" in response.json()


def test_it_answers_404_for_an_unknown_endpoint(reader):
    assert reader.get("/api/v1/endpoints/no-such-thing/").status_code == 404


def test_it_refuses_a_key_as_a_value_in_extra_body_and_masks_one_already_stored(staff, reader):
    provider = make_provider("acme")
    body = {"provider": "acme", "slug": "acme-new", "model": "m", "extra_body": {"user": KEYISH}}
    refused = staff.post("/api/v1/endpoints/", body, format="json")
    assert refused.status_code == 400, refused.content
    assert "user" in refused.json()["extra_body"][0] and KEYISH not in refused.content.decode()
    make_endpoint(provider, "acme-old", extra_body={"user": KEYISH, "metadata": {"n": 1}})

    shown = reader.get("/api/v1/endpoints/acme-old/")

    assert KEYISH not in shown.content.decode(), "a stored key was shown to a viewer"
    assert shown.json()["extra_body"]["metadata"] == {"n": 1}, "harmless options still shown"


KEYISH = "sk-proj-abcdefghijklmnopqrstuvwx"  # noqa: S105 - a fake key that must not come back


def test_it_sets_a_demand_time_zone_and_refuses_one_that_does_not_exist(staff, reader):
    make_provider("acme")
    endpoint = make_endpoint(Provider.objects.get(slug="acme"))
    zone = {"demand_time_zone": "America/New_York"}
    assert staff.patch("/api/v1/providers/acme/", zone, format="json").status_code == 200
    assert reader.get("/api/v1/providers/acme/").json()["demand_time_zone"] == "America/New_York"
    url = f"/api/v1/endpoints/{endpoint.slug}/"
    berlin = {"demand_time_zone": "Europe/Berlin"}
    assert staff.patch(url, berlin, format="json").status_code == 200
    endpoint.refresh_from_db()
    assert endpoint.demand_zone == "Europe/Berlin"  # the endpoint's own overrides the provider's
    for bad in ("America/Gotham", "../../etc/passwd", "EST 5"):
        refused = staff.patch(url, {"demand_time_zone": bad}, format="json")
        assert refused.status_code == 400, refused.content
        assert "is not a time zone" in refused.json()["demand_time_zone"][0]
        assert "America/New_York" in refused.json()["demand_time_zone"][0]  # what to give
    endpoint.refresh_from_db()
    assert endpoint.demand_time_zone == "Europe/Berlin"
    assert staff.patch(url, {"demand_time_zone": ""}, format="json").status_code == 200
    endpoint.refresh_from_db()
    assert endpoint.demand_zone == "America/New_York"  # blank: the provider's
