"""Azure OpenAI / Azure AI Foundry (docs/protocols.md §10): OpenAI Chat and Responses streams at
Azure's URLs, with Azure's auth.

Base URL forms:
- `https://{resource}.openai.azure.com` (or `…cognitiveservices.azure.com`): deployment URLs,
  `/openai/deployments/{deployment}/chat/completions?api-version=…`; the endpoint's model id is
  the deployment name. `?api-version=` on the base URL overrides API_VERSION.
- `https://{resource}.openai.azure.com/openai/v1`: the v1 surface, `/chat/completions` and
  `/responses` with the model (deployment) in the body and no api-version.

Auth: the key in the `api-key` header, or (no key variable) a Microsoft Entra ID bearer token
added by cloud_auth. Stream quirks are OpenAI Chat's parser's business: the first chunk with
empty `choices` and `prompt_filter_results` yields nothing (no clock starts on it), the
`content_filter_results` on chunks are ignored, `finish_reason: content_filter` is a filtered
outcome, and the larger chunks of the asynchronous filter mode are ordinary multi-token chunks.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from .base import EndpointConfig, RequestSpec
from .openai_chat import OpenAIChatAdapter
from .openai_responses import OpenAIResponsesAdapter
from .prompt import Prompt

API_VERSION = "2024-10-21"  # the GA version that streams usage (stream_options.include_usage)


def is_v1(base_url: str) -> bool:
    return urlsplit(base_url).path.rstrip("/").endswith("/openai/v1")


def azure_url(base_url: str, deployment: str, operation: str) -> str:
    """The request URL for `operation` ("/chat/completions", "/responses") on either surface."""
    parts = urlsplit(base_url)
    query = dict(parse_qsl(parts.query))
    path = parts.path.rstrip("/")
    if is_v1(base_url):
        return urlunsplit((parts.scheme, parts.netloc, path + operation, urlencode(query), ""))
    query.setdefault("api-version", API_VERSION)
    path += f"/openai/deployments/{quote(deployment, safe='')}{operation}"
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(query), ""))


def azure_spec(spec: RequestSpec, config: EndpointConfig, operation: str) -> RequestSpec:
    headers = {k: v for k, v in spec.headers.items() if k != "authorization"}
    if config.api_key:
        headers["api-key"] = config.api_key
    headers.update(config.extra_headers)
    body = dict(spec.json)
    if not is_v1(config.base_url) and "model" not in config.extra_body:
        body.pop("model", None)  # the deployment in the URL names the model
    return replace(
        spec, url=azure_url(config.base_url, config.model, operation), headers=headers, json=body
    )


class AzureOpenAIAdapter(OpenAIChatAdapter):
    name = "azure_openai"

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        spec = super().build_request(config, prompt=prompt, max_tokens=max_tokens)
        return azure_spec(spec, config, "/chat/completions")


class AzureResponsesAdapter(OpenAIResponsesAdapter):
    name = "azure_openai_responses"

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        if not is_v1(config.base_url):
            raise ValueError(
                "Azure's Responses API lives on the v1 surface: use a base URL ending in /openai/v1"
            )
        spec = super().build_request(config, prompt=prompt, max_tokens=max_tokens)
        return azure_spec(spec, config, "/responses")


adapters = (AzureOpenAIAdapter(), AzureResponsesAdapter())
