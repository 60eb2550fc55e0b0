"""Error classification (docs/protocols.md §8), retry-after parsing and redaction of secrets."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from providers.base import ErrorCategory as C
from providers.errors import (
    classify_status,
    classify_transport,
    clean_message,
    not_event_stream,
    parse_rate_limit_reset,
    parse_retry_after,
    redact,
    retry_hint,
    transport_error,
)
from providers.wire import http_error

NOW = datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("status", "error_type", "code", "message", "category"),
    [
        (400, "invalid_request_error", None, "", C.BAD_REQUEST),
        (400, "INVALID_ARGUMENT", None, "", C.BAD_REQUEST),
        (400, "BadRequestError", "400", "", C.BAD_REQUEST),
        (400, "invalid_request_error", "context_length_exceeded", "", C.BAD_REQUEST),
        (400, None, None, "prompt is too long: 210000 tokens > 200000 maximum", C.BAD_REQUEST),
        (400, "invalid_request_error", "unsupported_parameter", "", C.BAD_REQUEST),
        (400, "invalid_request_error", "unsupported_value", "", C.BAD_REQUEST),
        (400, "INVALID_ARGUMENT", "API_KEY_INVALID", "API key not valid", C.AUTH),
        (400, "FAILED_PRECONDITION", None, "", C.AUTH),
        (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided", C.AUTH),
        (401, "authentication_error", None, "", C.AUTH),
        (402, "billing_error", None, "", C.QUOTA_EXHAUSTED),
        (402, None, None, "Insufficient credits", C.QUOTA_EXHAUSTED),
        (403, "permission_error", None, "", C.AUTH),
        (403, "PERMISSION_DENIED", None, "", C.AUTH),
        (403, None, None, "Country, region, or territory not supported", C.AUTH),
        (404, "not_found_error", None, "", C.NOT_FOUND),
        (404, "NOT_FOUND", None, "", C.NOT_FOUND),
        (404, "not_found_error", None, "model 'llama3' not found, try pulling it", C.NOT_FOUND),
        (408, None, None, "", C.TIMEOUT),
        (409, None, None, "", C.SERVER_ERROR),
        (413, "request_too_large", None, "", C.BAD_REQUEST),
        (422, None, None, "", C.BAD_REQUEST),
        (429, "requests", "rate_limit_exceeded", "Rate limit reached for gpt-4o", C.RATE_LIMITED),
        (429, "rate_limit_error", None, "", C.RATE_LIMITED),
        (429, "RESOURCE_EXHAUSTED", "429", "", C.RATE_LIMITED),
        (
            429,
            "insufficient_quota",
            "insufficient_quota",
            "You exceeded your current quota",
            C.QUOTA_EXHAUSTED,
        ),
        (
            429,
            "tokens",
            "rate_limit_exceeded",
            "Request too large for gpt-4o on tokens per min (TPM)",
            C.BAD_REQUEST,
        ),
        (429, None, "credit_balance_exhausted", "", C.QUOTA_EXHAUSTED),
        (429, "rate_limit_error", "enforced_spend_limit_reached", "", C.QUOTA_EXHAUSTED),
        (500, "api_error", None, "", C.SERVER_ERROR),
        (500, "server_error", None, "", C.SERVER_ERROR),
        (500, "INTERNAL", None, "", C.SERVER_ERROR),
        (501, "not_supported_error", None, "", C.BAD_REQUEST),
        (502, None, None, "Bad gateway", C.SERVER_ERROR),
        (503, "UNAVAILABLE", None, "", C.OVERLOADED),
        (503, "service_unavailable_error", "server_is_overloaded", "", C.OVERLOADED),
        (503, "unavailable_error", None, "Loading model", C.OVERLOADED),
        (503, None, None, "No allowed providers are available", C.OVERLOADED),
        (504, "timeout_error", None, "", C.TIMEOUT),
        (504, "DEADLINE_EXCEEDED", None, "", C.TIMEOUT),
        (529, "overloaded_error", None, "Overloaded", C.OVERLOADED),
        (599, None, None, "", C.SERVER_ERROR),
        # mid-stream (HTTP 200): only the body can tell
        (200, "overloaded_error", None, "Overloaded", C.OVERLOADED),
        (200, "api_error", None, "", C.SERVER_ERROR),
        (200, "rate_limit_error", None, "", C.RATE_LIMITED),
        (200, "service_unavailable_error", "server_is_overloaded", "", C.OVERLOADED),
        (200, None, "rate_limit_exceeded", "", C.RATE_LIMITED),
        (200, None, "invalid_prompt", "", C.BAD_REQUEST),
        (200, "BadRequestError", "400", "", C.BAD_REQUEST),
        (200, None, "503", "", C.OVERLOADED),
        (None, None, None, "something odd", C.SERVER_ERROR),
    ],
)
def test_it_classifies_every_row_of_the_error_table(
    status: int | None, error_type: str | None, code: str | None, message: str, category: str
) -> None:
    assert classify_status(status, error_type, code, message) == category


def test_it_puts_an_explicit_type_before_x_should_retry_before_the_status() -> None:
    # explicit type wins over the header
    assert (
        classify_status(429, "insufficient_quota", None, "", should_retry=True) == C.QUOTA_EXHAUSTED
    )
    assert classify_status(400, "overloaded_error", None, "", should_retry=False) == C.OVERLOADED
    # without one, x-should-retry decides whether a status is transient
    assert classify_status(400, None, None, "", should_retry=True) == C.SERVER_ERROR
    assert classify_status(429, None, None, "", should_retry=False) == C.QUOTA_EXHAUSTED
    assert classify_status(429, None, None, "", should_retry=True) == C.RATE_LIMITED


@pytest.mark.parametrize(
    ("exc", "after_first_token", "category"),
    [
        (httpx.ConnectError("refused"), False, C.UNREACHABLE),
        (httpx.ConnectError("TLS handshake failed"), False, C.UNREACHABLE),
        (httpx.ConnectTimeout("slow"), False, C.TIMEOUT),
        (httpx.PoolTimeout("pool"), False, C.TIMEOUT),
        (httpx.ReadTimeout("idle"), False, C.TIMEOUT),
        (httpx.ReadTimeout("idle"), True, C.STREAM_BROKEN),
        (TimeoutError(), True, C.STREAM_BROKEN),
        (httpx.RemoteProtocolError("peer closed connection"), False, C.STREAM_BROKEN),
        (httpx.ReadError("reset"), True, C.STREAM_BROKEN),
    ],
)
def test_it_classifies_transport_exceptions(
    exc: BaseException, after_first_token: bool, category: str
) -> None:
    assert classify_transport(exc, after_first_token=after_first_token) == category


def test_it_calls_a_non_event_stream_200_a_server_error() -> None:
    error = not_event_stream("text/html; charset=utf-8", b"<html>Gateway</html>")
    assert error.category == C.SERVER_ERROR and "text/html" in error.message


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after": format_datetime(NOW + timedelta(seconds=42), usegmt=True)}, 42.0),
        ({"retry-after": format_datetime(NOW - timedelta(seconds=42), usegmt=True)}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "x", "retry-after": "3"}, 3.0),
        ({"retry-after-ms": "inf", "retry-after": "2"}, 2.0),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "Infinity"}, None),
        ({}, None),
    ],
)
def test_it_parses_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == seconds


def test_it_reads_retry_after_from_httpx_headers_case_insensitively() -> None:
    assert parse_retry_after(httpx.Headers({"RETRY-AFTER-MS": "250"})) == 0.25


def test_it_falls_back_to_rate_limit_reset_headers() -> None:
    headers = {
        "x-ratelimit-reset-requests": "1m30s",
        "x-ratelimit-reset-tokens": "12ms",
        "anthropic-ratelimit-tokens-reset": (NOW + timedelta(seconds=20))
        .isoformat()
        .replace("+00:00", "Z"),
    }
    assert parse_rate_limit_reset(headers, now=NOW) == 90.0
    body = json.dumps(
        {"error": {"type": "requests", "code": "rate_limit_exceeded", "message": "slow"}}
    )
    error = http_error(429, {"x-ratelimit-reset-requests": "6m0s"}, body.encode())
    assert error.category == C.RATE_LIMITED and error.retry_after_s == 360.0


def test_it_keeps_retry_after_and_x_should_retry_through_http_error() -> None:
    error = http_error(529, {"retry-after": "3", "x-should-retry": "true"}, b"")
    assert (error.category, error.retry_after_s, error.http_status) == (C.OVERLOADED, 3.0, 529)
    assert error.message == "HTTP 529"


def test_it_redacts_the_key_query_parameters_and_bearer_tokens() -> None:
    key = "my-very-secret-key-123"
    text = (
        f"POST https://x.test/v1/models/m:streamGenerateContent?alt=sse&key={key} failed; "
        f"header Authorization: Bearer {key}; echo {key}; other ?api_key=abcdef123&x=1"
    )
    cleaned = redact(text, [key])
    assert key not in cleaned and "abcdef123" not in cleaned
    assert "alt=sse" in cleaned and "x=1" in cleaned
    assert cleaned.count("[REDACTED]") == 4


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx",
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt",
        "AIzaSyA1234567890abcdefghijklmnopqrstu",
        "gsk_abcdefghijklmnopqrstuvwx",
        "Bearer abc.def.ghi",
        "x-api-key: abc123def456",
    ],
)
def test_it_redacts_well_known_key_shapes_it_was_not_told_about(secret: str) -> None:
    cleaned = redact(f"upstream said: Incorrect API key provided: {secret}.")
    assert secret.split()[-1] not in cleaned
    assert "Incorrect API key provided" in cleaned


def test_it_leaves_ordinary_text_alone_and_short_secrets_unused() -> None:
    text = "The server had an error while processing your request. Sorry about that!"
    assert redact(text, ["", None, "a"]) == text


def test_it_cleans_messages_to_one_bounded_line() -> None:
    message = clean_message("line one\n\n  line two " + "x" * 1000, ["line"], limit=50)
    assert "\n" not in message and len(message) == 50 and message.endswith("…")
    assert message.startswith("[REDACTED] one [REDACTED] two")


def test_it_never_puts_a_key_from_a_url_into_a_transport_error() -> None:
    exc = httpx.ConnectError("failed to reach https://x.test/v1?key=SECRETKEY123 (refused)")
    error = transport_error(exc, after_first_token=False)
    assert "SECRETKEY123" not in error.message and error.category == C.UNREACHABLE
    assert error.message.startswith("ConnectError:")


@pytest.mark.parametrize(
    ("message", "seconds"),
    [
        ("Rate limit reached for gpt-4o. Please try again in 11.054s.", 11.054),
        ("Please try again in 1m12.5s. Visit https://platform.openai.com", 72.5),
        ("Please try again in 20ms.", 0.02),
        ("Too many requests, retry after 7 seconds", 7.0),
        ("The server is busy.", None),
    ],
)
def test_it_reads_a_retry_hint_written_only_in_the_message(
    message: str, seconds: float | None
) -> None:
    assert retry_hint(message) == (pytest.approx(seconds) if seconds is not None else None)
