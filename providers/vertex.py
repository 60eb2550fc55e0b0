"""Google Vertex AI (docs/protocols.md §11): Gemini and Anthropic's models on Vertex.

Base URL: `https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}`,
or for the global endpoint `https://aiplatform.googleapis.com/v1/projects/{project}/locations/
global`. The adapters append the publisher model path:
- Gemini: `/publishers/google/models/{model}:streamGenerateContent?alt=sse` (the Gemini stream).
- Anthropic: `/publishers/anthropic/models/{model}:streamRawPredict`, the Messages stream, with
  `anthropic_version: vertex-2023-10-16` in the body and no model field.
Auth: an OAuth2 access token from google-auth (cloud_auth), or an API key (Vertex express mode)
in `x-goog-api-key` when the provider names a key variable.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import quote

from .anthropic_messages import AnthropicMessagesAdapter
from .base import EndpointConfig, RequestSpec
from .gemini import GeminiAdapter
from .prompt import Prompt
from .wire import join_url

ANTHROPIC_VERSION = "vertex-2023-10-16"


def _model(model: str) -> str:
    return quote(model.removeprefix("models/"), safe="+=@-._~")


def _auth(spec: RequestSpec, config: EndpointConfig, drop: tuple[str, ...]) -> dict[str, str]:
    headers = {k: v for k, v in spec.headers.items() if k not in drop}
    if config.api_key:
        headers["x-goog-api-key"] = config.api_key
    headers.update(config.extra_headers)
    return headers


class VertexGeminiAdapter(GeminiAdapter):
    name = "vertex_gemini"

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        spec = super().build_request(config, prompt=prompt, max_tokens=max_tokens)
        path = f"/publishers/google/models/{_model(config.model)}:streamGenerateContent?alt=sse"
        return replace(
            spec,
            url=join_url(config.base_url, path),
            headers=_auth(spec, config, ("x-goog-api-key",)),
        )


class VertexAnthropicAdapter(AnthropicMessagesAdapter):
    name = "vertex_anthropic"

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        spec = super().build_request(config, prompt=prompt, max_tokens=max_tokens)
        body = {"anthropic_version": ANTHROPIC_VERSION, **spec.json}
        body.pop("model", None)  # the model is in the URL
        path = f"/publishers/anthropic/models/{_model(config.model)}:streamRawPredict"
        return replace(
            spec,
            url=join_url(config.base_url, path),
            headers=_auth(spec, config, ("x-api-key", "anthropic-version")),
            json=body,
        )


adapters = (VertexGeminiAdapter(), VertexAnthropicAdapter())
