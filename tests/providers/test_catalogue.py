"""The provider catalogue and the register_providers / register_simulator commands."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from providers.base import Delta
from providers.catalogue import CATALOGUE, HOSTED, PRICE_NOTE
from providers.cloud_catalogue import CLOUD
from providers.config import endpoint_config
from providers.models import Endpoint, Protocol, Provider
from providers.registration import SIM_PROFILES
from tests.adapter_contract import stream

pytestmark = pytest.mark.django_db

NAMED = {
    "OpenAI", "Anthropic", "Google Gemini", "Groq", "Cerebras", "SambaNova", "Together AI",
    "Fireworks AI", "DeepInfra", "OpenRouter", "Mistral AI", "DeepSeek", "xAI",
    "vLLM", "SGLang", "llama.cpp", "Ollama",
}  # fmt: skip


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    for known in HOSTED:
        monkeypatch.delenv(known.api_key_env, raising=False)
    settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = True  # local servers and the simulator


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def models_server() -> Iterator[str]:
    """A local OpenAI-compatible server on loopback that only answers GET /v1/models."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path != "/v1/models":
                self.send_error(404)
                return
            body = json.dumps(
                {"object": "list", "data": [{"id": "qwen3-8b"}, {"id": "llama-3-8b"}]}
            )
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_it_knows_every_provider_the_issue_names() -> None:
    assert {p.name for p in CATALOGUE} == NAMED | {"OpenAI (Responses API)"}
    cloud = {c.known.protocol for c in CLOUD} | {"azure_openai_responses"}  # Azure's v1 URL
    assert {p.protocol for p in HOSTED} | cloud == {p.value for p in Protocol}
    assert all(p.base_url.startswith("https://") and p.api_key_env for p in HOSTED)


def test_it_registers_hosted_providers_disabled_and_says_which_variable_enables_each() -> None:
    out = run("register_providers")
    assert Provider.objects.count() == len(HOSTED)
    assert not Provider.objects.filter(enabled=True).exists()
    for known in HOSTED:
        assert f"{known.name}: set {known.api_key_env}" in out
    assert "Enabled: none" in out


def test_it_enables_exactly_the_providers_whose_key_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk_secretvalue123456789012")
    out = run("register_providers")
    assert list(Provider.objects.filter(enabled=True).values_list("slug", flat=True)) == ["groq"]
    assert "Enabled: Groq" in out
    assert "gsk_secretvalue" not in out
    monkeypatch.delenv("GROQ_API_KEY")
    run("register_providers")
    assert not Provider.objects.get(slug="groq").enabled


def test_it_is_idempotent_and_keeps_admin_edits() -> None:
    run("register_providers")
    endpoints = Endpoint.objects.count()
    edited = Endpoint.objects.get(provider__slug="openai", model="gpt-4o")
    edited.price_input_per_mtok = 1
    edited.save()
    out = run("register_providers")
    assert Endpoint.objects.count() == endpoints
    assert Provider.objects.count() == len(HOSTED)
    assert "Endpoints created: 0" in out
    assert Endpoint.objects.get(pk=edited.pk).price_input_per_mtok == 1


def test_it_stores_list_prices_with_their_source() -> None:
    run("register_providers")
    expected = sum(len(p.endpoints) for p in HOSTED)
    endpoints = Endpoint.objects.filter(provider__simulated=False)
    assert endpoints.count() == expected
    for endpoint in endpoints:
        assert endpoint.price_input_per_mtok > 0 and endpoint.price_output_per_mtok > 0
        assert endpoint.price_note == PRICE_NOTE


def test_it_registers_a_local_server_with_the_models_it_serves(models_server: str) -> None:
    out = run("register_providers", "--local-url", f"vllm={models_server}")
    vllm = Provider.objects.get(slug="vllm")
    assert vllm.enabled and vllm.base_url == models_server and vllm.protocol == "openai_chat"
    assert sorted(vllm.endpoints.values_list("model", flat=True)) == ["llama-3-8b", "qwen3-8b"]
    assert "vLLM" in out


def test_it_registers_a_local_server_with_a_given_model(models_server: str) -> None:
    run(
        "register_providers",
        "--local-url",
        f"ollama={models_server}",
        "--local-model",
        "ollama=gemma3",
    )
    assert list(Provider.objects.get(slug="ollama").endpoints.values_list("model", flat=True)) == [
        "gemma3"
    ]


def test_it_tells_how_to_add_a_model_when_a_local_server_lists_none() -> None:
    out = run("register_providers", "--local-url", "sglang=http://127.0.0.1:9/v1")
    assert Provider.objects.get(slug="sglang").endpoints.count() == 0
    assert "--local-model sglang=MODEL" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--local-url", "vllm"], "NAME=VALUE"),
        (["--local-url", "tgi=http://127.0.0.1:1/v1"], "unknown local server"),
        (["--local-url", "vllm=ftp://127.0.0.1/v1"], "http:// or https://"),
        (["--local-model", "vllm=m"], "needs --local-url vllm"),
    ],
)
def test_it_rejects_bad_local_flags_with_a_clear_error(args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run("register_providers", *args)
    assert not Provider.objects.exists()  # nothing registered on a bad flag


@override_settings(TOKSPEED_ALLOW_PRIVATE_ENDPOINTS=False)
def test_it_refuses_a_loopback_local_server_unless_private_endpoints_are_allowed() -> None:
    with pytest.raises(CommandError, match="TOKSPEED_ALLOW_PRIVATE_ENDPOINTS"):
        run("register_providers", "--local-url", "llamacpp=http://127.0.0.1:8080/v1")
    assert not Provider.objects.filter(slug="llamacpp").exists()


def test_it_registers_simulated_providers_for_every_protocol() -> None:
    out = run("register_simulator", "--url", "http://127.0.0.1:8100/")
    providers = Provider.objects.filter(simulated=True)
    # The cloud faces need the simulator's test credentials in the workers' environment, so
    # register_simulator leaves them out (docs/providers/simulator.md).
    cloud = {c.known.protocol for c in CLOUD} | {"azure_openai_responses"}
    assert sorted(providers.values_list("protocol", flat=True)) == sorted(
        p.value for p in Protocol if p.value not in cloud
    )
    for provider in providers:
        assert "(simulated)" in str(provider)
        expected_base = (
            "http://127.0.0.1:8100/v1"
            if provider.protocol.startswith("openai")
            else "http://127.0.0.1:8100"
        )
        assert provider.base_url == expected_base
        assert sorted(provider.endpoints.values_list("model", flat=True)) == sorted(
            p[0] for p in SIM_PROFILES
        )
    for endpoint in Endpoint.objects.filter(provider__simulated=True):
        assert "(simulated)" in endpoint.label
        assert endpoint.price_output_per_mtok > 0 and endpoint.price_note == "simulated price"
    assert f"{len(SIM_PROFILES) * 4} new endpoints" in out


def test_it_moves_simulated_providers_to_a_new_simulator_url_idempotently() -> None:
    run("register_simulator", "--url", "http://127.0.0.1:8100")
    count = Endpoint.objects.count()
    out = run("register_simulator", "--url", "http://127.0.0.1:8200")
    assert Endpoint.objects.count() == count and "0 new endpoints" in out
    assert Provider.objects.get(slug="sim-messages").base_url == "http://127.0.0.1:8200"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url", "gopher://127.0.0.1:8100"], "http:// or https://"),
        (
            ["--url", "http://127.0.0.1:8100", "--api-key-env", "sk-123"],
            "NAME of an environment variable",
        ),
    ],
)
def test_it_rejects_a_bad_simulator_registration(args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run("register_simulator", *args)
    assert not Provider.objects.exists()


def test_it_registers_simulated_endpoints_that_really_stream(simulator: Any) -> None:
    run("register_simulator", "--url", simulator.base_url)
    for provider in Provider.objects.filter(simulated=True):
        endpoint = provider.endpoints.get(model="sim-fast")
        result = stream(endpoint_config(endpoint), max_tokens=16)
        assert result.error is None, (provider.protocol, result.error)
        assert any(isinstance(i, Delta) for i in result.items)
        assert result.usage is not None and result.usage.output_tokens == 16
