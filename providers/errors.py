"""The one place that classifies provider errors (docs/protocols.md §8) and keeps secrets out
of them.

Precedence: (1) an explicit error code/type from the body or stream event, (2) the
`x-should-retry` header, (3) the HTTP status; transport exceptions are classified separately by
`classify_transport`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from .base import ErrorCategory as C
from .base import StreamError

# Explicit provider codes and types, lower-cased (OpenAI, Anthropic, Gemini status/reason,
# vLLM exception names, llama.cpp, Ollama, OpenRouter). Codes are checked before types because
# OpenAI pairs e.g. type invalid_request_error with code invalid_api_key.
EXPLICIT: dict[str, str] = {
    # bad request
    "invalid_request_error": C.BAD_REQUEST,
    "invalid_argument": C.BAD_REQUEST,
    "badrequesterror": C.BAD_REQUEST,
    "bad_request": C.BAD_REQUEST,
    "unsupported_parameter": C.BAD_REQUEST,
    "unsupported_value": C.BAD_REQUEST,
    "context_length_exceeded": C.BAD_REQUEST,
    "exceed_context_size_error": C.BAD_REQUEST,
    "request_too_large": C.BAD_REQUEST,
    "not_supported_error": C.BAD_REQUEST,
    "invalid_prompt": C.BAD_REQUEST,
    "invalid_image": C.BAD_REQUEST,
    "validation_error": C.BAD_REQUEST,
    "out_of_range": C.BAD_REQUEST,
    # auth
    "authentication_error": C.AUTH,
    "authenticationerror": C.AUTH,
    "invalid_api_key": C.AUTH,
    "api_key_invalid": C.AUTH,
    "unauthenticated": C.AUTH,
    "permission_error": C.AUTH,
    "permission_denied": C.AUTH,
    "permissiondeniederror": C.AUTH,
    "failed_precondition": C.AUTH,
    "unsupported_country_region_territory": C.AUTH,
    # quota
    "billing_error": C.QUOTA_EXHAUSTED,
    "insufficient_quota": C.QUOTA_EXHAUSTED,
    "credit_balance_exhausted": C.QUOTA_EXHAUSTED,
    "enforced_spend_limit_reached": C.QUOTA_EXHAUSTED,
    "insufficient_credits": C.QUOTA_EXHAUSTED,
    # not found
    "not_found_error": C.NOT_FOUND,
    "not_found": C.NOT_FOUND,
    "notfounderror": C.NOT_FOUND,
    "model_not_found": C.NOT_FOUND,
    # rate limits
    "rate_limit_exceeded": C.RATE_LIMITED,
    "rate_limit_error": C.RATE_LIMITED,
    "ratelimiterror": C.RATE_LIMITED,
    "resource_exhausted": C.RATE_LIMITED,
    "tokens": C.RATE_LIMITED,
    "requests": C.RATE_LIMITED,
    # overloaded
    "overloaded_error": C.OVERLOADED,
    "server_is_overloaded": C.OVERLOADED,
    "service_unavailable_error": C.OVERLOADED,
    "unavailable": C.OVERLOADED,
    "unavailable_error": C.OVERLOADED,
    "serviceunavailableerror": C.OVERLOADED,
    # timeout
    "timeout_error": C.TIMEOUT,
    "deadline_exceeded": C.TIMEOUT,
    # server
    "server_error": C.SERVER_ERROR,
    "api_error": C.SERVER_ERROR,
    "internal": C.SERVER_ERROR,
    "internal_error": C.SERVER_ERROR,
    "internalservererror": C.SERVER_ERROR,
    "internal_server_error": C.SERVER_ERROR,
    # AWS Bedrock exception names (x-amzn-ErrorType, or an exception frame mid-stream)
    "throttlingexception": C.RATE_LIMITED,
    "servicequotaexceededexception": C.RATE_LIMITED,
    "serviceunavailableexception": C.OVERLOADED,
    "modelnotreadyexception": C.OVERLOADED,
    "modelstreamerrorexception": C.SERVER_ERROR,
    "modelerrorexception": C.SERVER_ERROR,
    "internalserverexception": C.SERVER_ERROR,
    "modeltimeoutexception": C.TIMEOUT,
    "validationexception": C.BAD_REQUEST,
    "accessdeniedexception": C.AUTH,
    "unrecognizedclientexception": C.AUTH,
    "invalidsignatureexception": C.AUTH,
    "expiredtokenexception": C.AUTH,
    "resourcenotfoundexception": C.NOT_FOUND,
}

_STATUS: dict[int, str] = {
    400: C.BAD_REQUEST,
    401: C.AUTH,
    402: C.QUOTA_EXHAUSTED,
    403: C.AUTH,
    404: C.NOT_FOUND,
    408: C.TIMEOUT,
    409: C.SERVER_ERROR,
    413: C.BAD_REQUEST,
    422: C.BAD_REQUEST,
    429: C.RATE_LIMITED,
    500: C.SERVER_ERROR,
    501: C.BAD_REQUEST,
    502: C.SERVER_ERROR,
    503: C.OVERLOADED,
    504: C.TIMEOUT,
    529: C.OVERLOADED,
}

RETRYABLE = frozenset({C.RATE_LIMITED, C.OVERLOADED, C.TIMEOUT, C.SERVER_ERROR, C.STREAM_BROKEN})


def _explicit(value: str | None) -> str | None:
    if not value:
        return None
    return EXPLICIT.get(value.strip().lower())


def _refine(category: str, message: str) -> str:
    """429s that are not rate limits: a request larger than the whole limit, or no quota left."""
    if category != C.RATE_LIMITED:
        return category
    lowered = message.lower()
    if "request too large" in lowered:
        return C.BAD_REQUEST
    if "current quota" in lowered or "insufficient credits" in lowered:
        return C.QUOTA_EXHAUSTED
    return category


def classify_status(
    status: int | None,
    error_type: str | None = None,
    error_code: str | None = None,
    message: str = "",
    *,
    should_retry: bool | None = None,
) -> str:
    """Category of an error given its HTTP status (None or 200 mid-stream) and body fields.

    `should_retry` is the server's `x-should-retry` header when present.
    """
    message = message or ""
    explicit = _explicit(error_code) or _explicit(error_type)
    if explicit:
        return _refine(explicit, message)
    if error_code and error_code.isdigit() and status in (None, 200):
        status = int(error_code)  # vLLM / Gemini put the HTTP status in `code` mid-stream
    if status is None or 200 <= status < 300:
        lowered = message.lower()
        if "rate limit" in lowered:
            return C.RATE_LIMITED
        if "overloaded" in lowered:
            return C.OVERLOADED
        return C.SERVER_ERROR
    by_status = _STATUS.get(status) or (C.SERVER_ERROR if status >= 500 else C.BAD_REQUEST)
    if should_retry is True and by_status not in RETRYABLE:
        return C.SERVER_ERROR  # the server says this one is transient
    if should_retry is False and by_status == C.RATE_LIMITED:
        return C.QUOTA_EXHAUSTED  # a 429 that will not clear by waiting (e.g. a spend limit)
    return _refine(by_status, message)


class ProxyRefused(httpx.ProxyError):
    """A proxy answered CONNECT with a status other than 2xx (407: its credentials)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def classify_transport(exc: BaseException, *, after_first_token: bool) -> str:
    """Category of an httpx transport exception (docs/protocols.md §8, last rows).

    A connection that could not be made (refused, DNS failure, TLS handshake or certificate
    failure: httpx.ConnectError; a proxy that could not open the tunnel: httpx.ProxyError) is
    `unreachable`; a proxy asking for credentials (407) is `auth`; one that took too long is a
    `timeout`.
    """
    if isinstance(exc, ProxyRefused) and exc.status == 407:
        return C.AUTH
    if isinstance(exc, httpx.ConnectError | httpx.ProxyError):
        return C.UNREACHABLE
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return C.TIMEOUT
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return C.STREAM_BROKEN if after_first_token else C.TIMEOUT
    return C.STREAM_BROKEN


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive header lookup for plain dicts as well as httpx.Headers."""
    value = headers.get(name)
    if value is not None:
        return value
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def should_retry_header(headers: Mapping[str, str]) -> bool | None:
    value = (header(headers, "x-should-retry") or "").strip().lower()
    return {"true": True, "false": False}.get(value)


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait: `retry-after-ms`, else `retry-after` (seconds or an HTTP date)."""
    raw_ms = header(headers, "retry-after-ms")
    if raw_ms:
        try:
            value = float(raw_ms) / 1000
            if math.isfinite(value) and value >= 0:
                return value
        except ValueError:
            pass
    raw = (header(headers, "retry-after") or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)  # also parses "nan" and "inf": neither is a wait
        return value if math.isfinite(value) and value >= 0 else None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


# "Please try again in 11.054s" / "in 1m30s" / "in 20ms" / "retry after 7 seconds".
_RETRY_HINT = re.compile(
    r"(?i)(?:try again in|retry in|retry after|retry-after:?|wait)\s+"
    r"(\d+(?:\.\d+)?(?:ms|us|µs|ns|h|m|s)(?:\d+(?:\.\d+)?(?:ms|us|µs|ns|h|m|s))*"
    r"|\d+(?:\.\d+)?\s*(?:seconds?|secs?|milliseconds?|minutes?|mins?)\b)"
)
_WORD_UNITS = {"sec": 1.0, "second": 1.0, "millisecond": 1e-3, "min": 60.0, "minute": 60.0}


def retry_hint(message: str) -> float | None:
    """Seconds to wait when only the error's message says so (no retry-after header)."""
    match = _RETRY_HINT.search(message)
    if match is None:
        return None
    hint = match.group(1)
    seconds = _go_duration(hint)
    if seconds is None:
        number, _, unit = hint.partition(" ") if " " in hint else _split_number(hint)
        unit = unit.strip().lower().rstrip("s") or "s"
        seconds = float(number) * _WORD_UNITS.get(unit, 1.0)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _split_number(text: str) -> tuple[str, str, str]:
    digits = len(text) - len(text.lstrip("0123456789."))
    return text[:digits], "", text[digits:]


def _go_duration(text: str) -> float | None:
    parts = _GO_DURATION.findall(text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        return None
    return sum(float(n) * _GO_UNITS[u] for n, u in parts)


def parse_rate_limit_reset(
    headers: Mapping[str, str], *, now: datetime | None = None
) -> float | None:
    """Longest wait announced by rate-limit reset headers (OpenAI durations, Anthropic RFC 3339)."""
    waits: list[float] = []
    for key, value in headers.items():
        key = key.lower()
        if key.startswith("x-ratelimit-reset-"):
            seconds = _go_duration(value)
            if seconds is not None:
                waits.append(seconds)
        elif key.startswith("anthropic-ratelimit-") and key.endswith("-reset"):
            try:
                when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            if when.tzinfo is not None:
                waits.append(max(0.0, (when - (now or datetime.now(UTC))).total_seconds()))
    return max(waits) if waits else None


REDACTED = "[REDACTED]"
_PATTERNS = (
    # key / token query parameters (Gemini-style ?key=...)
    re.compile(r"(?i)([?&;](?:key|api[_-]?key|access_token|token)=)[^&#\s\"'<>]+"),
    # bearer tokens and key headers written out in messages
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+"),
    re.compile(r"(?i)((?:x-api-key|x-goog-api-key|api-key)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"),
    # well-known key shapes even when we were not told the key
    re.compile(r"()\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_-]{16,}"),
    re.compile(r"()\bAIza[0-9A-Za-z_-]{30,}"),
    re.compile(r"()\bgsk_[A-Za-z0-9]{20,}"),
    re.compile(r"()\bxai-[A-Za-z0-9]{20,}"),
)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with the given secrets, `key=` URL parameters and bearer tokens replaced."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def clean_message(text: str, secrets: Iterable[str | None] = (), *, limit: int = 500) -> str:
    """A redacted, whitespace-collapsed message short enough to store."""
    text = " ".join(redact(text, secrets).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def not_event_stream(content_type: str, body_start: bytes = b"") -> StreamError:
    """A 2xx answer whose body is not `text/event-stream` (e.g. an HTML page from a proxy)."""
    preview = body_start[:200].decode("utf-8", "replace")
    message = f"expected text/event-stream, got {content_type or 'no content type'}"
    return StreamError(
        C.SERVER_ERROR, clean_message(f"{message}: {preview}" if preview else message)
    )


def missing_end_marker(protocol: str, received_bytes: int) -> StreamError:
    """EOF before the protocol's end marker (or, for Gemini, before a finishReason)."""
    return StreamError(
        C.STREAM_BROKEN,
        f"{protocol} stream closed without its end marker after {received_bytes} bytes",
    )


def transport_error(exc: BaseException, *, after_first_token: bool) -> StreamError:
    """A StreamError for an httpx exception; the message names the exception, never a URL key."""
    detail = clean_message(str(exc)) or "no detail"
    category = classify_transport(exc, after_first_token=after_first_token)
    return StreamError(category, f"{type(exc).__name__}: {detail}")
