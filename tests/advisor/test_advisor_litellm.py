"""The advisor's LiteLLM feed loaded into a real `litellm.Router`, one request per protocol
streamed from the simulator through it (loopback only; LiteLLM's cost map read locally)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import time_machine
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.core.cache import cache

from advisor.litellm_params import route
from advisor.models import WorkloadProfile
from providers.simulator.cloud_auth import TEST_ACCESS_KEY, TEST_SECRET_KEY
from tests import advisor_data as seed
from tests import dashboard_data as data

pytest_plugins = ["tests.api_fixtures"]
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def litellm() -> Any:
    """LiteLLM, imported by the test that uses it, not at collection (seconds of CPU that every
    pytest-xdist worker would pay)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import
    return pytest.importorskip("litellm")


# (protocol, base URL path on the simulator, model, key variable)
ENDPOINTS = [
    ("openai_chat", "/v1", "sim-fast", "SIM_KEY"),
    ("openai_responses", "/v1", "sim-fast", "SIM_KEY"),
    ("anthropic_messages", "", "sim-fast", "SIM_KEY"),
    ("gemini", "", "sim-fast", "SIM_KEY"),
    ("azure_openai", "", "sim-fast", "SIM_KEY"),
    ("azure_openai_responses", "/openai/v1", "sim-fast", "SIM_KEY"),
    ("bedrock_converse", "", "sim-fast", ""),
    ("vertex_gemini", "/v1/projects/tokspeed-test/locations/us-central1", "sim-fast", ""),
    ("vertex_anthropic", "/v1/projects/tokspeed-test/locations/us-east5", "claude-sim-fast", ""),
]


@pytest.fixture
def cloud_env(simulator: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Credentials as a worker reads them: a key variable, AWS's chain, Google's ADC file whose
    token endpoint is the simulator's."""
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
    for name, value in {
        "GOOGLE_APPLICATION_CREDENTIALS": str(path),
        "NO_GCE_CHECK": "True",
        "AWS_ACCESS_KEY_ID": TEST_ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": TEST_SECRET_KEY,
        "AWS_REGION": "us-east-1",
        "SIM_KEY": "sim-key",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    return simulator


@pytest.fixture
def feed(cloud_env: Any, reader: Any) -> dict[str, Any]:
    cache.clear()
    with time_machine.travel(seed.NOW, tick=False):
        profile = WorkloadProfile.objects.create(
            slug="sdk", name="SDK", input_tokens=50, output_tokens=20, calls=1, budget_s=10
        )
        for index, (protocol, path, model, key_env) in enumerate(ENDPOINTS):
            prov = data.provider(
                protocol.replace("_", "-"),
                protocol=protocol,
                base_url=cloud_env.base_url + path,
                api_key_env=key_env,
                simulated=True,
            )
            ep = data.endpoint(prov, protocol.replace("_", "-"), model=model)
            seed.measured(ep, ttft_ms=100 + index, decode_tps=200)
            profile.endpoints.add(ep)
        seed.rebuild(now=seed.NOW)
        response = reader.get("/api/v1/advice/", {"profile": "sdk", "format": "litellm"})
    cache.clear()
    assert response.status_code == 200, response.content
    return response.json()


def _stream_text(router: Any, group: str) -> str:
    chunks = router.completion(
        model=group,
        messages=[{"role": "user", "content": "Write a Python rate limiter module."}],
        max_tokens=12,
        stream=True,
    )
    return "".join((chunk.choices[0].delta.content or "") for chunk in chunks if chunk.choices)


def test_it_streams_one_request_per_protocol_through_litellm_router(
    feed: dict, litellm: Any
) -> None:
    deployments = feed["model_list"]
    by_protocol = {d["model_info"]["id"].replace("-", "_"): d for d in deployments}
    assert sorted(by_protocol) == sorted(p for p, *_ in ENDPOINTS)
    litellm.Router(model_list=deployments)  # the whole feed loads as one model group
    failures = {}
    for protocol, deployment in by_protocol.items():
        router = litellm.Router(model_list=[deployment], num_retries=0)
        try:
            text = _stream_text(router, deployment["model_name"])
        except Exception as exc:  # noqa: BLE001 - collect every protocol's failure, then assert
            failures[protocol] = f"{type(exc).__name__}: {str(exc)[:300]}"
            continue
        if not text.strip():
            failures[protocol] = "no text streamed"
    assert not failures, json.dumps(failures, indent=1)


def test_it_names_each_platforms_parameters_the_way_litellm_reads_them() -> None:
    azure = route("azure_openai", "gpt-4o-mini", "https://team.openai.azure.com")
    assert azure["model"] == "azure/gpt-4o-mini" and azure["api_version"], azure
    assert azure["api_base"] == "https://team.openai.azure.com", azure
    bedrock = route(
        "bedrock_converse",
        "us.amazon.nova-pro-v1:0",
        "https://bedrock-runtime.eu-west-1.amazonaws.com",
    )
    assert bedrock == {
        "model": "bedrock/converse/us.amazon.nova-pro-v1:0",
        "aws_region_name": "eu-west-1",
    }, bedrock
    vertex = route(
        "vertex_anthropic",
        "claude-sonnet-4-5@20250929",
        "https://us-east5-aiplatform.googleapis.com/v1/projects/acme/locations/us-east5",
    )
    assert vertex == {
        "model": "vertex_ai/claude-sonnet-4-5@20250929",
        "vertex_project": "acme",
        "vertex_location": "us-east5",
    }, vertex
    gemini = route("gemini", "gemini-2.5-flash", "https://generativelanguage.googleapis.com")
    assert gemini["api_base"] == "https://generativelanguage.googleapis.com/v1beta", gemini
