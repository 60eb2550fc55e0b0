"""Provider/Endpoint rules: base-URL validation, key variables, endpoint_config, admin pages."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client, override_settings

from providers.config import MissingKey, adhoc_config, endpoint_config
from providers.models import Endpoint, Provider

pytestmark = pytest.mark.django_db

KEY = "sk-proj-thisIsTheSecretKeyValue1234"


def provider(**fields: Any) -> Provider:
    values = {
        "slug": "acme",
        "name": "Acme",
        "protocol": "openai_chat",
        "base_url": "https://8.8.8.8/v1",
        "api_key_env": "ACME_API_KEY",
    }
    values.update(fields)
    return Provider(**values)


def errors_for(obj: Provider) -> dict[str, list[str]]:
    try:
        obj.full_clean()
    except ValidationError as exc:
        return exc.message_dict
    return {}


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://8.8.8.8/v1", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("https://user:pass@8.8.8.8/v1", "not in the URL"),
    ],
)
def test_it_accepts_only_http_urls_without_credentials(url: str, message: str) -> None:
    assert message in " ".join(errors_for(provider(base_url=url)).get("base_url", []))


@override_settings(TOKSPEED_ALLOW_PRIVATE_ENDPOINTS=False)
@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://10.1.2.3/v1", "http://[::1]:8080/v1",
     "http://192.168.1.20/v1", "http://169.254.169.254/latest"],
)  # fmt: skip
def test_it_refuses_private_and_loopback_hosts_by_default(url: str) -> None:
    messages = " ".join(errors_for(provider(base_url=url)).get("base_url", []))
    assert "TOKSPEED_ALLOW_PRIVATE_ENDPOINTS" in messages


@override_settings(TOKSPEED_ALLOW_PRIVATE_ENDPOINTS=False)
def test_it_accepts_a_public_address_when_private_ones_are_refused() -> None:
    assert errors_for(provider(base_url="https://8.8.8.8/v1")) == {}


@override_settings(TOKSPEED_ALLOW_PRIVATE_ENDPOINTS=True)
def test_it_accepts_local_servers_when_private_endpoints_are_allowed() -> None:
    assert errors_for(provider(base_url="http://127.0.0.1:8000/v1")) == {}


def test_it_refuses_a_key_where_the_variable_name_belongs() -> None:
    messages = errors_for(provider(api_key_env=KEY))["api_key_env"]
    assert "NAME of an environment variable" in messages[0]
    assert KEY not in messages[0]


def test_it_reads_the_key_from_the_environment_at_call_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    acme = provider(extra_headers={"x-team": "perf"})
    acme.save()
    endpoint = Endpoint.objects.create(
        provider=acme, slug="acme-m", model="m-1", max_tokens_field="n_predict",
        reasoning_effort="low", extra_body={"seed": 1},
    )  # fmt: skip
    monkeypatch.delenv("ACME_API_KEY", raising=False)
    with pytest.raises(MissingKey) as missing:
        endpoint_config(endpoint)
    assert "ACME_API_KEY" in str(missing.value) and missing.value.variable == "ACME_API_KEY"
    monkeypatch.setenv("ACME_API_KEY", KEY)
    config = endpoint_config(endpoint)
    assert config.api_key == KEY
    assert (config.base_url, config.protocol, config.model) == (
        "https://8.8.8.8/v1",
        "openai_chat",
        "m-1",
    )
    assert config.extra_headers == {"x-team": "perf"} and config.extra_body == {"seed": 1}
    assert (config.max_tokens_field, config.reasoning_effort) == ("n_predict", "low")
    assert KEY not in repr(Provider.objects.get(pk=acme.pk).__dict__)


def test_it_needs_no_key_for_a_keyless_local_server() -> None:
    local = provider(slug="vllm", api_key_env="")
    local.save()
    endpoint = Endpoint.objects.create(provider=local, slug="vllm-q", model="q")
    assert endpoint_config(endpoint).api_key is None


def test_it_treats_an_empty_key_variable_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPTY_KEY", "  ")
    with pytest.raises(MissingKey, match="EMPTY_KEY"):
        adhoc_config(
            base_url="https://8.8.8.8/v1", protocol="gemini", model="g", api_key_env="EMPTY_KEY"
        )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"protocol": "grpc"}, "Unknown protocol 'grpc'"),
        ({"base_url": "ftp://8.8.8.8"}, "http:// or https://"),
        ({"model": "  "}, "Give a model id"),
        ({"api_key_env": "not a name"}, "NAME of an environment variable"),
    ],
)
def test_it_validates_ad_hoc_endpoints(fields: dict[str, str], message: str) -> None:
    values = {"base_url": "https://8.8.8.8/v1", "protocol": "openai_chat", "model": "m"} | fields
    with pytest.raises(ValidationError, match=message):
        adhoc_config(**values)


@pytest.fixture
def admin_client() -> Client:
    user = User.objects.create_superuser("admin", "admin@example.test", "pw-for-tests-only")
    client = Client()
    client.force_login(user)
    return client


def test_it_lists_providers_in_the_admin_without_ever_showing_the_key(
    admin_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", KEY)
    acme = provider()
    acme.save()
    provider(slug="nokey", name="NoKey", api_key_env="NOKEY_API_KEY_UNSET", simulated=True).save()
    page = admin_client.get("/admin/providers/provider/").content.decode()
    assert "Acme" in page and "NoKey" in page and "Key configured" in page
    # Rows are ordered by name: Acme's variable is set, NoKey's is not.
    assert re.findall(r'field-key_status"><img [^>]*alt="(\w+)"', page) == ["True", "False"]
    change = admin_client.get(f"/admin/providers/provider/{acme.pk}/change/").content.decode()
    assert "ACME_API_KEY" in change
    assert KEY not in page and KEY not in change


def test_it_lists_endpoints_in_the_admin_with_prices_and_simulated_flag(
    admin_client: Client,
) -> None:
    sim = provider(slug="sim", name="Sim", simulated=True)
    sim.save()
    Endpoint.objects.create(
        provider=sim, slug="sim-gpu", model="sim-gpu", display_name="GPU-class (simulated)",
        price_input_per_mtok="0.6000", price_output_per_mtok="0.8000", price_note="simulated price",
    )  # fmt: skip
    page = admin_client.get("/admin/providers/endpoint/").content.decode()
    assert "GPU-class (simulated) @ Sim<" in page or "GPU-class (simulated) @ Sim " in page
    assert "(simulated) @ Sim (simulated)" not in page  # said once
    assert "0.6000" in page and "simulated price" in page
    filtered = admin_client.get(
        "/admin/providers/endpoint/?provider__simulated__exact=0"
    ).content.decode()
    assert "sim-gpu" not in filtered
