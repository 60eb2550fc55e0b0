"""Azure OpenAI and Vertex AI over loopback: Azure's paths, filter chunks and api-key; OAuth2
tokens from azure-identity and google-auth fetched from the simulator, refreshed after a 401."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from benchmarks.measure import Limits, measure_request
from benchmarks.measure.http.transport import make_client
from providers import cloud_auth
from providers.base import Delta, EndpointConfig, ErrorCategory, Finish
from providers.config import credential_for
from providers.registry import get_adapter
from tests.adapter_contract import parse_bytes, stream
from tests.providers import test_adapter_openai_chat as chat

AZURE_STREAM = (
    b'data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":'
    b'[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}'
    b"\n\n"
    b'data: {"choices":[{"content_filter_results":{},"delta":{"content":"","role":"assistant"},'
    b'"finish_reason":null,"index":0}],"created":1,"id":"c1","model":"gpt-4o","object":'
    b'"chat.completion.chunk"}\n\n'
    # the asynchronous filter mode: several tokens per chunk
    b'data: {"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},'
    b'"delta":{"content":"Hello there, how"},"finish_reason":null,"index":0}],"id":"c1"}\n\n'
    b'data: {"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"content_filter",'
    b'"index":0}],"id":"c1"}\n\n'
    b"data: [DONE]\n\n"
)


class TestAzureOpenAIContract(chat.TestOpenAIChatContract):
    protocol = "azure_openai"
    key_header = "api-key"
    sim_on_openai_base = False  # deployment URLs on the simulator's root

    def test_it_builds_a_streaming_request_with_the_key_only_in_its_header(self) -> None:
        super().test_it_builds_a_streaming_request_with_the_key_only_in_its_header()
        spec = get_adapter(self.protocol).build_request(self.config(), prompt="Hi", max_tokens=5)
        assert spec.url == (
            "https://api.example.test/v1/openai/deployments/m-1/chat/completions"
            "?api-version=2024-10-21"
        )
        assert "model" not in spec.json  # the deployment names the model

    def test_it_streams_whether_or_not_the_base_url_has_its_version(self, sim: Any) -> None:
        # Azure's base is the resource (deployment URLs) or its /openai/v1 surface, slash or not.
        root = sim.base_url
        for base_url in (root, root + "/", root + "/openai/v1", root + "/openai/v1/"):
            result = stream(
                self.config(base_url=base_url, model="sim-fast+tokens=10"), max_tokens=20
            )
            assert result.status == 200 and result.error is None, base_url
            assert result.usage is not None and result.usage.output_tokens == 10


def test_it_starts_no_clock_on_azures_filter_chunk_and_reads_a_content_filter_stop() -> None:
    whole = parse_bytes("azure_openai", AZURE_STREAM)
    assert whole[0] == Delta("Hello there, how")  # the prompt-filter chunk yields nothing
    assert Finish("content_filter", ErrorCategory.CONTENT_FILTERED) in whole
    for cut in range(1, len(AZURE_STREAM)):
        assert parse_bytes("azure_openai", AZURE_STREAM[:cut], AZURE_STREAM[cut:]) == whole


def test_it_streams_from_the_v1_surface_with_the_model_in_the_body(simulator: Any) -> None:
    for protocol in ("azure_openai", "azure_openai_responses"):
        config = EndpointConfig(
            base_url=simulator.base_url + "/openai/v1",
            protocol=protocol,
            model="sim-fast+tokens=12",
            api_key="azure-key",
        )
        result = stream(config)
        assert result.error is None and result.end_seen
        assert result.usage is not None and result.usage.output_tokens == 12


@pytest.fixture
def google_adc(simulator: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A service-account file whose token endpoint is the simulator's (no network)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    info = {
        "type": "service_account",
        "project_id": "tokspeed-test",
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": "bench@tokspeed-test.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": simulator.base_url + "/oauth2/token",
    }
    path = tmp_path / "sa.json"
    path.write_text(json.dumps(info))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    cloud_auth.forget_tokens()
    yield simulator
    cloud_auth.forget_tokens()


LIMITS = Limits(connect_timeout_s=5, idle_timeout_s=5, deadline_s=10, max_bytes=1 << 20)


def measure(config: EndpointConfig) -> Any:
    async def run() -> Any:
        async with make_client(limits=LIMITS, max_connections=1) as client:
            return await measure_request(client, config, prompt="Hi", max_tokens=40, limits=LIMITS)

    return asyncio.run(run())


@pytest.mark.parametrize("protocol", ["vertex_gemini", "vertex_anthropic"])
def test_it_measures_vertex_with_a_token_and_refreshes_it_after_a_401(
    google_adc: Any, protocol: str
) -> None:
    base_url = google_adc.base_url + "/v1/projects/tokspeed-test/locations/us-central1"
    credential = credential_for(protocol, api_key_env="", base_url=base_url)
    config = EndpointConfig(
        base_url=base_url, protocol=protocol, model="sim-fast+tokens=15", credential=credential
    )
    first = measure(config)
    assert first.ok and first.output_tokens == 15 and first.ttft_ms is not None
    httpx.post(google_adc.base_url + "/_sim/tokens/expire").raise_for_status()
    refused = measure(config)
    assert refused.http_status == 401 and refused.error_category == ErrorCategory.AUTH
    assert "ya29" not in refused.error_message
    again = measure(config)  # the refused token was dropped: a fresh one is fetched
    assert again.ok and again.output_tokens == 15


def test_it_measures_azure_with_an_entra_token_from_managed_identity(
    simulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "MSI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("IDENTITY_ENDPOINT", simulator.base_url + "/msi/token")
    monkeypatch.setenv("IDENTITY_HEADER", "tokspeed-test")
    cloud_auth.forget_tokens()
    try:
        credential = credential_for("azure_openai", api_key_env="", base_url=simulator.base_url)
        config = EndpointConfig(
            base_url=simulator.base_url,
            protocol="azure_openai",
            model="sim-fast+tokens=11",
            credential=credential,
        )
        m = measure(config)
        assert m.ok and m.output_tokens == 11
        keyless = measure(
            EndpointConfig(base_url=simulator.base_url, protocol="azure_openai", model="sim-fast")
        )
        assert keyless.http_status == 401 and keyless.error_category == ErrorCategory.AUTH
    finally:
        cloud_auth.forget_tokens()
