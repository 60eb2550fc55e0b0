"""Google Gemini streamGenerateContent?alt=sse (docs/protocols.md §5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers.base import Delta, ErrorCategory, Finish, SSEEvent, StreamError, Usage
from providers.gemini import thinking_config
from providers.registry import get_adapter
from tests.adapter_contract import AdapterContract, transcript

adapter = get_adapter("gemini")


def chunk(
    parts: list[dict[str, Any]] | None = None, finish: str | None = None, **top: Any
) -> SSEEvent:
    body: dict[str, Any] = dict(top)
    if parts is not None or finish:
        candidate: dict[str, Any] = {"content": {"parts": parts or [], "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        body["candidates"] = [candidate]
    return SSEEvent("message", json.dumps(body))


class TestGeminiContract(AdapterContract):
    protocol = "gemini"
    TRANSCRIPT = transcript("gemini")  # §5.3: CRLF framing, usage on every chunk, no end marker
    expected_text = "Clementine, a ginger tabby cat."
    # candidatesTokenCount excludes thoughts: generated = 9 + 30.
    expected_usage = Usage(
        input_tokens=7, output_tokens=39, reasoning_tokens=30, cached_tokens=None
    )
    key_header = "x-goog-api-key"
    default_max_field = "maxOutputTokens"
    rate_limit_body = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
        }
    }


def test_it_builds_an_sse_url_without_the_key() -> None:
    config = TestGeminiContract().config(
        base_url="https://generativelanguage.googleapis.com/", model="models/gemini-2.5-flash"
    )
    spec = adapter.build_request(config, prompt="Hi", max_tokens=128)
    assert spec.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert "key=" not in spec.url
    assert spec.json["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]
    assert spec.json["generationConfig"] == {"maxOutputTokens": 128}


def test_it_keeps_simulator_model_options_readable_in_the_path() -> None:
    spec = adapter.build_request(
        TestGeminiContract().config(model="sim-fast+tokens=5"), prompt="x", max_tokens=9
    )
    assert "/models/sim-fast+tokens=5:streamGenerateContent" in spec.url


def test_it_reads_thought_parts_as_reasoning() -> None:
    items = adapter.parse(
        chunk([{"text": "**Planning** the story", "thought": True}, {"text": "Once"}])
    )
    assert items == [Delta("**Planning** the story", reasoning=True), Delta("Once")]


def test_it_waits_for_candidate_counts_before_reporting_output_tokens() -> None:
    items = adapter.parse(
        chunk([{"text": "C"}], usageMetadata={"promptTokenCount": 7, "totalTokenCount": 7})
    )
    assert items[-1] == Usage(
        input_tokens=7, output_tokens=None, reasoning_tokens=None, cached_tokens=None
    )


@pytest.mark.parametrize(
    ("reason", "outcome"),
    [
        ("STOP", ""),
        ("MAX_TOKENS", ErrorCategory.TRUNCATED),
        ("SAFETY", ErrorCategory.CONTENT_FILTERED),
        ("RECITATION", ErrorCategory.CONTENT_FILTERED),
        ("PROHIBITED_CONTENT", ErrorCategory.CONTENT_FILTERED),
    ],
)
def test_it_classifies_finish_reasons(reason: str, outcome: str) -> None:
    assert adapter.parse(chunk([], finish=reason)) == [Finish(reason, outcome)]


def test_it_reports_a_blocked_prompt_as_content_filtered() -> None:
    items = adapter.parse(
        chunk(promptFeedback={"blockReason": "SAFETY"}, usageMetadata={"promptTokenCount": 4})
    )
    assert items[-1] == Finish("SAFETY", ErrorCategory.CONTENT_FILTERED)


def test_it_classifies_an_in_stream_error_object() -> None:
    items = adapter.parse(
        SSEEvent(
            "message",
            json.dumps(
                {
                    "error": {
                        "code": 503,
                        "message": "The model is overloaded.",
                        "status": "UNAVAILABLE",
                    }
                }
            ),
        )
    )
    assert len(items) == 1 and isinstance(items[0], StreamError)
    assert items[0].category == ErrorCategory.OVERLOADED


@pytest.mark.parametrize(
    ("status", "body", "category"),
    [
        (
            400,
            {
                "code": 400,
                "status": "INVALID_ARGUMENT",
                "message": "API key not valid.",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                    }
                ],
            },
            ErrorCategory.AUTH,
        ),
        (
            400,
            {
                "code": 400,
                "status": "FAILED_PRECONDITION",
                "message": "User location is not supported",
            },
            ErrorCategory.AUTH,
        ),
        (
            400,
            {"code": 400, "status": "INVALID_ARGUMENT", "message": "bad"},
            ErrorCategory.BAD_REQUEST,
        ),
        (403, {"code": 403, "status": "PERMISSION_DENIED", "message": "no"}, ErrorCategory.AUTH),
        (
            404,
            {"code": 404, "status": "NOT_FOUND", "message": "models/x is not found"},
            ErrorCategory.NOT_FOUND,
        ),
        (500, {"code": 500, "status": "INTERNAL", "message": "oops"}, ErrorCategory.SERVER_ERROR),
        (
            503,
            {"code": 503, "status": "UNAVAILABLE", "message": "overloaded"},
            ErrorCategory.OVERLOADED,
        ),
        (
            504,
            {"code": 504, "status": "DEADLINE_EXCEEDED", "message": "slow"},
            ErrorCategory.TIMEOUT,
        ),
    ],
)
def test_it_classifies_http_errors(status: int, body: dict[str, Any], category: str) -> None:
    error = adapter.classify_http_error(status, {}, json.dumps({"error": body}).encode())
    assert error.category == category


def test_it_takes_the_retry_delay_from_retry_info_when_no_header_is_sent() -> None:
    body = {
        "error": {
            "code": 429,
            "status": "RESOURCE_EXHAUSTED",
            "message": "quota",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"}],
        }
    }
    error = adapter.classify_http_error(429, {}, json.dumps(body).encode())
    assert error.category == ErrorCategory.RATE_LIMITED and error.retry_after_s == 31.0


@pytest.mark.parametrize(
    ("effort", "expected"),
    [
        ("", None),
        ("none", {"thinkingBudget": 0}),
        ("auto", {"thinkingBudget": -1, "includeThoughts": True}),
        ("2048", {"thinkingBudget": 2048, "includeThoughts": True}),
        ("high", {"thinkingLevel": "HIGH", "includeThoughts": True}),
    ],
)
def test_it_maps_reasoning_effort_to_a_thinking_config(
    effort: str, expected: dict[str, Any] | None
) -> None:
    assert thinking_config(effort) == expected


def test_it_refuses_an_unknown_reasoning_effort() -> None:
    with pytest.raises(ValueError, match="not understood for Gemini"):
        thinking_config("turbo")


@pytest.mark.parametrize(
    ("reason", "outcome"),
    [
        ("STOP", ""),
        ("MAX_TOKENS", ErrorCategory.TRUNCATED),
        ("SAFETY", ErrorCategory.CONTENT_FILTERED),
        ("BLOCKLIST", ErrorCategory.CONTENT_FILTERED),
        ("PROHIBITED_CONTENT", ErrorCategory.CONTENT_FILTERED),
        ("SPII", ErrorCategory.CONTENT_FILTERED),
        ("LANGUAGE", ErrorCategory.CONTENT_FILTERED),
        ("OTHER", ErrorCategory.SERVER_ERROR),
        ("MALFORMED_FUNCTION_CALL", ErrorCategory.SERVER_ERROR),
        ("UNEXPECTED_TOOL_CALL", ErrorCategory.SERVER_ERROR),
    ],
)
def test_it_tells_clean_stops_from_every_other_finish_reason(reason: str, outcome: str) -> None:
    data = json.dumps({"candidates": [{"content": {"parts": []}, "finishReason": reason}]})
    assert get_adapter("gemini").parse(SSEEvent("message", data)) == [Finish(reason, outcome)]
