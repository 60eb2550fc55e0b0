"""OpenAI Responses API (docs/protocols.md §3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

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
from tests.adapter_contract import AdapterContract, parse_bytes, transcript

adapter = get_adapter("openai_responses")


def event(kind: str, **fields: Any) -> SSEEvent:
    return SSEEvent(kind, json.dumps({"type": kind, "sequence_number": 1, **fields}))


def final(kind: str, **response: Any) -> SSEEvent:
    usage = {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 4},
        "output_tokens": 50,
        "output_tokens_details": {"reasoning_tokens": 32},
        "total_tokens": 70,
    }
    return event(kind, response={"id": "resp_1", "usage": usage, **response})


class TestOpenAIResponsesContract(AdapterContract):
    protocol = "openai_responses"
    TRANSCRIPT = transcript("openai_responses")  # §3.3: recorded gpt-4o-mini stream
    expected_text = "Why did the"
    expected_usage = Usage(input_tokens=11, output_tokens=3, reasoning_tokens=0, cached_tokens=0)
    key_header = "authorization"
    default_max_field = "max_output_tokens"
    rate_limit_body = {
        "error": {
            "message": "Rate limit reached",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    }
    sim_on_openai_base = True


def test_it_builds_a_responses_request_with_reasoning_summaries() -> None:
    config = TestOpenAIResponsesContract().config(reasoning_effort="low")
    spec = adapter.build_request(config, prompt="Hi", max_tokens=300)
    assert spec.url == "https://api.example.test/v1/responses"
    assert spec.json["input"] == "Hi" and spec.json["stream"] is True
    assert spec.json["max_output_tokens"] == 300
    # Without summary the API streams no reasoning text, and TTFT would hide the thinking.
    assert spec.json["reasoning"] == {"effort": "low", "summary": "auto"}


def test_it_reads_reasoning_summary_deltas_as_summarised_reasoning() -> None:
    items = parse_bytes("openai_responses", transcript("openai_responses_reasoning"))
    assert items == [
        Delta("**Comparing numbers**", reasoning=True),
        ReasoningShown(ReasoningMode.SUMMARIZED),
    ]


def test_it_reads_raw_reasoning_text_deltas_from_open_weight_servers() -> None:
    items = adapter.parse(event("response.reasoning_text.delta", delta="step 1", content_index=0))
    assert items == [Delta("step 1", reasoning=True)]


def test_it_reads_usage_with_reasoning_and_cached_tokens_at_completion() -> None:
    items = adapter.parse(final("response.completed", status="completed"))
    assert items == [Usage(20, 50, 32, 4), Finish("completed", ""), End()]


@pytest.mark.parametrize(
    ("reason", "outcome"),
    [
        ("max_output_tokens", ErrorCategory.TRUNCATED),
        ("content_filter", ErrorCategory.CONTENT_FILTERED),
    ],
)
def test_it_classifies_an_incomplete_response(reason: str, outcome: str) -> None:
    items = adapter.parse(
        final("response.incomplete", status="incomplete", incomplete_details={"reason": reason})
    )
    assert items == [Usage(20, 50, 32, 4), Finish(reason, outcome), End()]


@pytest.mark.parametrize(
    ("code", "category"),
    [
        ("rate_limit_exceeded", ErrorCategory.RATE_LIMITED),
        ("server_error", ErrorCategory.SERVER_ERROR),
        ("invalid_prompt", ErrorCategory.BAD_REQUEST),
    ],
)
def test_it_classifies_a_failed_response_by_its_code(code: str, category: str) -> None:
    items = adapter.parse(
        final("response.failed", status="failed", error={"code": code, "message": "no"})
    )
    errors = [i for i in items if isinstance(i, StreamError)]
    assert len(errors) == 1 and errors[0].category == category
    assert not any(isinstance(i, End) for i in items)


def test_it_classifies_the_flat_error_event() -> None:
    items = adapter.parse(
        event("error", code="ERR_SOMETHING", message="Something went wrong", param=None)
    )
    assert len(items) == 1 and isinstance(items[0], StreamError)
    assert items[0].category == ErrorCategory.SERVER_ERROR
    assert "Something went wrong" in items[0].message
    disconnected = adapter.parse(
        event(
            "error", code=None, message="stream disconnected before completion: Rate limit reached"
        )
    )
    assert disconnected[0].category == ErrorCategory.RATE_LIMITED


def test_it_ignores_bookkeeping_events_and_empty_deltas() -> None:
    for kind in (
        "response.created",
        "response.in_progress",
        "response.output_text.done",
        "response.queued",
    ):
        assert adapter.parse(event(kind, response={"usage": None})) == []
    assert adapter.parse(event("response.output_text.delta", delta="")) == []
