"""The simulator driven by the official SDKs it imitates, on their default paths (loopback only).

google-genai (Gemini API at /v1 and /v1beta, Vertex at /v1beta1/projects/…, express mode at
/v1/publishers/…), AnthropicVertex with the `anthropic_version` the SDK sends today, OpenAI's
client on Azure's v1 surface with the key as a bearer token, and unknown routes answered with a
JSON error a client can read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from providers.simulator.process import SimulatorHandle, start_simulator

PROMPT = "Write a Python rate limiter module."
KEY = "sim-sdk-key-123"  # a test key for a local simulator


# The SDKs are imported by the tests that use them, not at collection: together they take
# seconds of CPU to import, which every pytest-xdist worker would pay to collect this module.
@pytest.fixture(scope="module")
def genai() -> Any:
    return pytest.importorskip("google.genai")


@pytest.fixture(scope="module")
def anthropic() -> Any:
    return pytest.importorskip("anthropic")


@pytest.fixture(scope="module")
def openai() -> Any:
    return pytest.importorskip("openai")


@pytest.fixture(scope="module")
def keyed_sim() -> Iterator[SimulatorHandle]:
    """A simulator that checks its key, so a wrong key is refused and a right one accepted."""
    with start_simulator(api_key=KEY) as handle:
        yield handle


def google_token(sim: SimulatorHandle) -> Any:
    """An OAuth2 access token from the simulator's own token endpoint (JWT-bearer grant)."""
    from google.oauth2.credentials import Credentials

    grant = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "a.b.c"}
    response = httpx.post(sim.base_url + "/oauth2/token", data=grant)
    assert response.status_code == 200, response.text
    return Credentials(token=response.json()["access_token"])


def genai_text(client: Any) -> str:
    from google.genai import types

    config = types.GenerateContentConfig(max_output_tokens=12)
    chunks = client.models.generate_content_stream(model="sim-fast", contents=PROMPT, config=config)
    return "".join(chunk.text or "" for chunk in chunks)


@pytest.mark.parametrize("api_version", ["v1", "v1beta"])
def test_it_streams_to_google_genai_on_the_gemini_api_paths(
    simulator: SimulatorHandle, genai: Any, api_version: str
) -> None:
    options = genai.types.HttpOptions(base_url=simulator.base_url, api_version=api_version)
    client = genai.Client(api_key="any-key", http_options=options)
    text = genai_text(client)
    assert text.strip(), f"google-genai read no text from /{api_version}/models/…"


def test_it_streams_to_google_genai_on_vertex_with_a_token(
    simulator: SimulatorHandle, genai: Any
) -> None:
    client = genai.Client(
        vertexai=True,
        project="tokspeed-test",
        location="us-central1",
        credentials=google_token(simulator),
        http_options=genai.types.HttpOptions(base_url=simulator.base_url),  # SDK default: v1beta1
    )
    assert genai_text(client).strip(), "google-genai read no text from Vertex's /v1beta1/ path"


@pytest.mark.parametrize("api_version", ["v1", "v1beta1"])
def test_it_streams_to_google_genai_in_vertex_express_mode(
    simulator: SimulatorHandle, genai: Any, api_version: str
) -> None:
    options = genai.types.HttpOptions(base_url=simulator.base_url, api_version=api_version)
    client = genai.Client(vertexai=True, api_key="express-key", http_options=options)
    text = genai_text(client)
    assert text.strip(), f"no text from express mode's /{api_version}/publishers/google/… path"


def test_it_streams_to_anthropic_vertex_with_the_sdks_anthropic_version(
    simulator: SimulatorHandle, anthropic: Any
) -> None:
    client = anthropic.AnthropicVertex(
        region="us-east5",
        project_id="tokspeed-test",
        access_token=google_token(simulator).token,
        base_url=simulator.base_url + "/v1",
    )
    with client.messages.stream(
        model="sim-fast", max_tokens=12, messages=[{"role": "user", "content": PROMPT}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text.strip(), "AnthropicVertex read no text"
    assert final.usage.output_tokens == 12, f"usage {final.usage}"


def test_it_still_refuses_an_anthropic_version_vertex_never_had(
    simulator: SimulatorHandle, anthropic: Any
) -> None:
    client = anthropic.AnthropicVertex(
        region="us-east5",
        project_id="tokspeed-test",
        access_token=google_token(simulator).token,
        base_url=simulator.base_url + "/v1",
        max_retries=0,
    )
    with pytest.raises(anthropic.BadRequestError, match="anthropic_version"):
        client.messages.create(
            model="sim-fast",
            max_tokens=12,
            messages=[{"role": "user", "content": PROMPT}],
            extra_body={"anthropic_version": "2001-01-01"},
            stream=True,
        )


def test_it_takes_a_bearer_key_on_azures_v1_surface(
    keyed_sim: SimulatorHandle, openai: Any
) -> None:
    client = openai.OpenAI(base_url=keyed_sim.base_url + "/openai/v1/", api_key=KEY)
    chunks = client.chat.completions.create(
        model="sim-fast",
        messages=[{"role": "user", "content": PROMPT}],
        max_completion_tokens=12,
        stream=True,
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.strip(), "the OpenAI client read no text from Azure's v1 surface"
    wrong = openai.OpenAI(
        base_url=keyed_sim.base_url + "/openai/v1/", api_key="wrong", max_retries=0
    )
    with pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(
            model="sim-fast", messages=[{"role": "user", "content": PROMPT}], stream=True
        )


@pytest.mark.parametrize(
    ("path", "reads"),
    [
        ("/v1/chat/complete", lambda body: body["error"]["message"]),
        ("/v1beta/models/sim-fast:generateContentTypo", lambda body: body["error"]["message"]),
        ("/openai/v2/chat/completions", lambda body: body["error"]["message"]),
        ("/model/sim-fast/converse-typo", lambda body: body["message"]),
    ],
)
def test_it_answers_an_unknown_route_with_a_json_error_in_the_providers_shape(
    simulator: SimulatorHandle, path: str, reads: Any
) -> None:
    response = httpx.post(simulator.base_url + path, json={})
    assert response.status_code == 404, response.text
    assert response.headers["content-type"].startswith("application/json"), response.text
    assert path in reads(response.json()), f"the error does not name the path: {response.text}"
