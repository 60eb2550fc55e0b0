"""Anthropic Messages (docs/protocols.md §4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers.anthropic_messages import thinking_option
from providers.base import (
    Delta,
    End,
    ErrorCategory,
    Finish,
    ReasoningMode,
    ReasoningShown,
    SSEEvent,
    StreamError,
    Usage,
)
from providers.registry import get_adapter
from tests.adapter_contract import AdapterContract, merged_usage, parse_bytes, transcript

adapter = get_adapter("anthropic_messages")


def event(kind: str, **fields: Any) -> SSEEvent:
    return SSEEvent(kind, json.dumps({"type": kind, **fields}))


class TestAnthropicMessagesContract(AdapterContract):
    protocol = "anthropic_messages"
    TRANSCRIPT = transcript("anthropic_messages")  # §4.3: recorded claude-sonnet-4-5 stream
    expected_text = "[12345,67890]"
    expected_usage = Usage(
        input_tokens=135, output_tokens=10, reasoning_tokens=None, cached_tokens=0
    )
    key_header = "x-api-key"
    default_max_field = "max_tokens"
    rate_limit_body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Number of request tokens has exceeded your rate limit",
        },
        "request_id": "req_1",
    }


def test_it_sends_the_api_version_and_no_bearer_token() -> None:
    config = TestAnthropicMessagesContract().config(base_url="https://api.anthropic.com")
    spec = adapter.build_request(config, prompt="Hi", max_tokens=64)
    assert spec.url == "https://api.anthropic.com/v1/messages"
    assert spec.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in spec.headers
    assert spec.json["stream"] is True and spec.json["max_tokens"] == 64
    assert "thinking" not in spec.json


def test_it_keeps_the_placeholder_output_count_of_message_start_out_of_usage() -> None:
    start = transcript("anthropic_messages").split(b"\n\n")[0]
    items = parse_bytes("anthropic_messages", start + b"\n\n")
    # message_start says output_tokens 1: a stream cut here has no output count at all.
    assert merged_usage(items) == Usage(input_tokens=135, output_tokens=None, cached_tokens=0)


def test_it_reads_thinking_deltas_as_reasoning_and_ignores_signatures() -> None:
    items = parse_bytes("anthropic_messages", transcript("anthropic_thinking"))
    assert items == [ReasoningShown(ReasoningMode.STREAMED), Delta("Simple educ", reasoning=True)]


def test_it_counts_cache_reads_and_writes_as_input_and_reads_thinking_tokens() -> None:
    start = event(
        "message_start",
        message={
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 100,
                "output_tokens": 1,
            }
        },
    )
    delta = event(
        "message_delta",
        delta={"stop_reason": "end_turn", "stop_sequence": None},
        usage={"output_tokens": 300, "output_tokens_details": {"thinking_tokens": 67}},
    )
    items = adapter.parse(start) + adapter.parse(delta)
    assert merged_usage(items) == Usage(115, 300, 67, 100)
    assert items[-1] == Finish("end_turn", "")


def test_it_accepts_padding_spaces_inside_data() -> None:
    items = adapter.parse(SSEEvent("message_stop", '{"type":"message_stop"}   '))
    assert items == [End()]


@pytest.mark.parametrize(
    ("reason", "outcome"),
    [
        ("end_turn", ""),
        ("stop_sequence", ""),
        ("tool_use", ""),
        ("max_tokens", ErrorCategory.TRUNCATED),
        ("refusal", ErrorCategory.REFUSED),
        ("pause_turn", ErrorCategory.TRUNCATED),
    ],
)
def test_it_classifies_stop_reasons(reason: str, outcome: str) -> None:
    items = adapter.parse(
        event("message_delta", delta={"stop_reason": reason}, usage={"output_tokens": 3})
    )
    assert items[-1] == Finish(reason, outcome)


@pytest.mark.parametrize(
    ("error_type", "category"),
    [
        ("overloaded_error", ErrorCategory.OVERLOADED),
        ("api_error", ErrorCategory.SERVER_ERROR),
        ("rate_limit_error", ErrorCategory.RATE_LIMITED),
    ],
)
def test_it_classifies_mid_stream_error_events_by_type_not_status(
    error_type: str, category: str
) -> None:
    items = adapter.parse(
        event("error", error={"details": None, "type": error_type, "message": "Overloaded"})
    )
    assert len(items) == 1 and isinstance(items[0], StreamError)
    assert items[0].category == category


@pytest.mark.parametrize(
    ("status", "error_type", "category"),
    [
        (400, "invalid_request_error", ErrorCategory.BAD_REQUEST),
        (401, "authentication_error", ErrorCategory.AUTH),
        (402, "billing_error", ErrorCategory.QUOTA_EXHAUSTED),
        (403, "permission_error", ErrorCategory.AUTH),
        (404, "not_found_error", ErrorCategory.NOT_FOUND),
        (413, "request_too_large", ErrorCategory.BAD_REQUEST),
        (500, "api_error", ErrorCategory.SERVER_ERROR),
        (504, "timeout_error", ErrorCategory.TIMEOUT),
        (529, "overloaded_error", ErrorCategory.OVERLOADED),
    ],
)
def test_it_classifies_http_errors(status: int, error_type: str, category: str) -> None:
    body = {"type": "error", "error": {"type": error_type, "message": "m"}, "request_id": "req_1"}
    error = adapter.classify_http_error(
        status, {"x-should-retry": "true"}, json.dumps(body).encode()
    )
    assert error.category == category
    assert error_type in error.message


def test_it_treats_a_429_spend_limit_as_quota_exhausted() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "spend limit",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
    }
    error = adapter.classify_http_error(429, {}, json.dumps(body).encode())
    assert error.category == ErrorCategory.QUOTA_EXHAUSTED


@pytest.mark.parametrize(
    ("effort", "max_tokens", "expected"),
    [
        ("", 4000, None),
        ("none", 4000, None),
        ("adaptive", 4000, {"type": "adaptive"}),
        ("2048", 4000, {"type": "enabled", "budget_tokens": 2048}),
        ("high", 4000, {"type": "enabled", "budget_tokens": 3000}),
        ("low", 2000, {"type": "enabled", "budget_tokens": 1024}),
        ("9000", 4000, {"type": "enabled", "budget_tokens": 3999}),
    ],
)
def test_it_maps_reasoning_effort_to_a_thinking_budget_inside_max_tokens(
    effort: str, max_tokens: int, expected: dict[str, Any] | None
) -> None:
    assert thinking_option(effort, max_tokens) == expected


def test_it_refuses_thinking_that_cannot_fit_or_is_not_understood() -> None:
    with pytest.raises(ValueError, match="at least 1024"):
        thinking_option("low", 500)
    with pytest.raises(ValueError, match="not understood"):
        thinking_option("extreme", 4000)


def test_it_sends_thinking_when_an_effort_is_set() -> None:
    config = TestAnthropicMessagesContract().config(reasoning_effort="medium")
    spec = adapter.build_request(config, prompt="Hi", max_tokens=8000)
    assert spec.json["thinking"] == {"type": "enabled", "budget_tokens": 4000}
