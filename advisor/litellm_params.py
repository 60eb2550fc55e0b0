"""The `litellm_params` that reach one endpoint through LiteLLM, per protocol.

LiteLLM picks its handler by the model's prefix and builds the URL itself from the platform's
own parameters, so each protocol gets the form LiteLLM documents for it:

- OpenAI Chat / Responses: `openai/<model>` with `api_base` (…/v1).
- Anthropic Messages: `anthropic/<model>` with `api_base` (LiteLLM adds /v1/messages).
- Gemini API: `gemini/<model>` with `api_base` ending in the API version (/v1beta).
- Azure OpenAI: `azure/<deployment>` with the resource as `api_base` and `api_version`; the v1
  surface (…/openai/v1) is OpenAI's API there, `openai/<deployment>` with a bearer key.
- Bedrock: `bedrock/converse/<model id>` with `aws_region_name` (from the runtime host); another
  host (a VPC endpoint, a gateway, the simulator) goes in `api_base`.
- Vertex AI: `vertex_ai/<model>` with `vertex_project` and `vertex_location` from the base URL;
  credentials from Application Default Credentials, as tokspeed's workers use them. A host other
  than Google's goes in `api_base` (LiteLLM adds the project path). LiteLLM picks its Vertex
  handler by the model's name: a Gemini model without "gemini" in its id gets `base_model`;
  Claude on Vertex must keep its `claude…` id (Vertex's own ids all do).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from providers.azure_openai import API_VERSION as AZURE_API_VERSION

_BEDROCK_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$")
_VERTEX_PATH = re.compile(r"/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)")


def _root(base_url: str) -> str:
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _azure(model: str, base_url: str) -> dict[str, Any]:
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/openai/v1"):
        api_base = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        return {"model": f"openai/{model}", "api_base": api_base}
    version = parse_qs(parts.query).get("api-version", [AZURE_API_VERSION])[0]
    return {"model": f"azure/{model}", "api_base": _root(base_url), "api_version": version}


def _bedrock(model: str, base_url: str) -> dict[str, Any]:
    params: dict[str, Any] = {"model": f"bedrock/converse/{model}"}
    host = urlsplit(base_url).hostname or ""
    if match := _BEDROCK_HOST.match(host):
        params["aws_region_name"] = match.group(1)
    else:
        params["api_base"] = base_url.rstrip("/")
    return params


def _vertex(protocol: str, model: str, base_url: str) -> dict[str, Any]:
    params: dict[str, Any] = {"model": f"vertex_ai/{model}"}
    if protocol == "vertex_gemini" and "gemini" not in model:
        params["base_model"] = "vertex_ai/gemini"  # LiteLLM's Gemini route for any model id
    if match := _VERTEX_PATH.search(urlsplit(base_url).path):
        params["vertex_project"] = match.group("project")
        params["vertex_location"] = match.group("location")
    if not (urlsplit(base_url).hostname or "").endswith("aiplatform.googleapis.com"):
        params["api_base"] = _root(base_url)
    return params


def _gemini(model: str, base_url: str) -> dict[str, Any]:
    api_base = base_url.rstrip("/")
    if not re.search(r"/v1(beta)?$", api_base):
        api_base += "/v1beta"
    return {"model": f"gemini/{model}", "api_base": api_base}


def route(protocol: str, model: str, base_url: str) -> dict[str, Any]:
    """`model` and the URL parameters of one deployment (key and prices are added by the feed)."""
    if protocol in ("azure_openai", "azure_openai_responses"):
        return _azure(model, base_url)
    if protocol == "bedrock_converse":
        return _bedrock(model, base_url)
    if protocol in ("vertex_gemini", "vertex_anthropic"):
        return _vertex(protocol, model, base_url)
    if protocol == "gemini":
        return _gemini(model, base_url)
    if protocol == "anthropic_messages":
        return {"model": f"anthropic/{model}", "api_base": base_url.rstrip("/")}
    return {"model": f"openai/{model}", "api_base": base_url}
