"""Helpers shared by the protocol adapters: JSON payloads, error bodies, request assembly."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from .base import EndpointConfig, ErrorCategory, RequestSpec, StreamError
from .errors import (
    classify_status,
    clean_message,
    parse_rate_limit_reset,
    parse_retry_after,
    retry_hint,
    should_retry_header,
)


def is_keepalive(data: str) -> bool:
    """Relays sometimes send keep-alives as data (`data: : keep-alive`, empty `data:`)."""
    stripped = data.strip()
    return not stripped or stripped[0] == ":"


def load_object(data: str) -> dict[str, Any] | StreamError:
    """The event's JSON object, or a stream_broken error for undecodable data."""
    try:
        obj = json.loads(data)
    except ValueError:
        return StreamError(
            ErrorCategory.STREAM_BROKEN,
            clean_message(f"malformed JSON in data event: {data}", limit=200),
        )
    if not isinstance(obj, dict):
        return StreamError(
            ErrorCategory.STREAM_BROKEN,
            clean_message(f"data event is not an object: {data}", limit=200),
        )
    return obj


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (parsers ignore odd shapes)."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """A token count, or None when absent or not a number (json.loads accepts NaN/Infinity)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value)


def as_number(value: Any) -> float | None:
    """A non-negative finite figure (a duration), or None when absent, odd or negative."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return float(value)


def error_fields(obj: Any) -> tuple[str | None, str | None, str]:
    """(type, code, message) of any provider's error JSON.

    Shapes: OpenAI/compat `{"error": {"message","type","code"}}`; Anthropic
    `{"type":"error","error":{"type","message"}}`; Gemini `{"error":{"code":429,"status",
    "message","details":[{"reason"}]}}`; old vLLM flat `{"object":"error",...}`; OpenAI Responses
    flat `{"type":"error","code","message"}`; FastAPI `{"detail": ...}`; `{"error": "text"}`;
    Gemini/Vertex bodies wrapped in a JSON array `[{"error": {...}}]`.
    """
    obj = unwrap(obj)
    if not isinstance(obj, dict):
        return None, None, str(obj)
    err = obj.get("error")
    if isinstance(err, str):
        return None, None, err
    if not isinstance(err, dict):
        if "detail" in obj and "type" not in obj:
            return "validation_error", None, str(obj["detail"])
        err = obj
    error_type = err.get("type") if isinstance(err.get("type"), str) else None
    if error_type == "error":
        error_type = None  # the Responses API's flat event type, not an error kind
    if isinstance(err.get("status"), str):
        error_type = err["status"]  # Gemini: RESOURCE_EXHAUSTED, INVALID_ARGUMENT...
    code = err.get("code")
    code = str(code) if isinstance(code, str | int) and not isinstance(code, bool) else None
    for detail in err.get("details") or ():
        # Gemini reports an invalid key as INVALID_ARGUMENT with reason API_KEY_INVALID.
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            code = detail["reason"]
            break
    nested = err.get("details") if isinstance(err.get("details"), dict) else None
    if nested and isinstance(nested.get("error_code"), str):
        code = nested["error_code"]  # Anthropic spend limit
    message = err.get("message")
    return error_type, code, message if isinstance(message, str) else ""


def unwrap(obj: Any) -> Any:
    """Gemini and Vertex sometimes send their error body as a one-element JSON array."""
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        return obj[0]
    return obj


def stream_error(obj: Any, *, status: int | None = None) -> StreamError:
    """A StreamError for an error object that arrived inside the stream (HTTP 200)."""
    error_type, code, message = error_fields(obj)
    category = classify_status(status, error_type, code, message)
    label = error_type or code or "error"
    return StreamError(
        category,
        clean_message(f"{label}: {message}" if message else label),
        retry_after_s=_body_retry_delay(obj, message),
    )


def http_error(status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
    """Classify a non-2xx answer with a JSON or non-JSON body, keeping retry-after."""
    text = body.decode("utf-8", "replace")
    try:
        obj: Any = unwrap(json.loads(text))
    except ValueError:
        obj = None
    if obj is None:
        error_type, code, message = None, None, text
    else:
        error_type, code, message = error_fields(obj)
    category = classify_status(
        status, error_type, code, message, should_retry=should_retry_header(headers)
    )
    retry_after = parse_retry_after(headers)
    if retry_after is None:
        retry_after = _body_retry_delay(obj, message)
    if retry_after is None and category == ErrorCategory.RATE_LIMITED:
        retry_after = parse_rate_limit_reset(headers)
    label = " ".join(part for part in (f"HTTP {status}", error_type or code) if part)
    message = clean_message(f"{label}: {message}" if message.strip() else label)
    return StreamError(category, message, retry_after_s=retry_after, http_status=status)


def _body_retry_delay(obj: Any, message: str) -> float | None:
    """A wait written in the body: Gemini's RetryInfo detail, else the message's own words."""
    obj = unwrap(obj)
    err = obj.get("error") if isinstance(obj, dict) else None
    if not isinstance(err, dict):
        err = obj if isinstance(obj, dict) else {}
    if isinstance(err.get("response"), dict):  # Responses `response.failed`
        err = as_dict(err["response"].get("error"))
    details = err.get("details")
    for detail in details if isinstance(details, list) else ():
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                seconds = float(delay[:-1])
            except ValueError:
                continue
            if math.isfinite(seconds) and seconds >= 0:
                return seconds
    return retry_hint(message) if message else None


def merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` updated by `extra`, merging nested objects (e.g. extra stream_options keys)."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def headers_for(config: EndpointConfig, auth: Mapping[str, str]) -> dict[str, str]:
    """JSON + SSE headers, the protocol's auth headers, then the provider's extra headers."""
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    headers.update(auth)
    headers.update(config.extra_headers)
    return headers


def authorized(spec: RequestSpec, config: EndpointConfig) -> RequestSpec:
    """`spec` with the config's Credential headers added (a token, a SigV4 signature).

    May do I/O (a token refresh): call it while preparing, before the clock starts.
    """
    if config.credential is None:
        return spec
    return replace(spec, headers={**spec.headers, **config.credential.headers(spec)})


_VERSION = re.compile(r"/v\d+(?:(?:alpha|beta)\d*)?$")


def endpoint_url(base_url: str, path: str, *, version: str, bare_host_only: bool = False) -> str:
    """`base_url` + the protocol's `/{version}{path}`, whether or not the base has the version.

    A base whose path already ends with a version segment (`/v1`, `/v1beta`) gets `path` alone:
    `https://host/v1` + `/messages` never becomes `/v1/v1/messages`. Otherwise the version is
    added, except with `bare_host_only` (the OpenAI family, whose compatible servers put their
    API under any path: `/openai/v1`, `/v1beta/openai`, `/api/paas/v4`) where only a base with no
    path at all gets it.
    """
    base = base_url.rstrip("/")
    base_path = urlsplit(base).path
    if _VERSION.search(base_path) or (bare_host_only and base_path):
        return base + path
    return f"{base}/{version}{path}"


def join_url(base_url: str, path: str) -> str:
    """`base_url` + `path`, for APIs whose paths carry no version segment (Bedrock, Vertex)."""
    return base_url.rstrip("/") + path
