"""OpenAI Chat Completions and OpenAI-compatible servers (docs/protocols.md §2, §6)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers.base import Delta, End, ErrorCategory, Finish, SSEEvent, StreamError, Usage
from providers.registry import get_adapter
from tests.adapter_contract import AdapterContract, merged_usage, parse_bytes, transcript

TRANSCRIPT = transcript("openai_chat")  # §2.3: recorded gpt-4o stream, usage chunk, [DONE]
VLLM = transcript("vllm_chat")  # §6.1: reasoning parser + continuous usage stats
LLAMACPP = transcript("llamacpp_chat")  # §6.3: role chunk with content null, usage + timings

adapter = get_adapter("openai_chat")


def chunk(
    delta: dict[str, Any] | None = None, *, finish: str | None = None, **top: Any
) -> SSEEvent:
    body: dict[str, Any] = {"object": "chat.completion.chunk", **top}
    if delta is not None or finish is not None:
        body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return SSEEvent("message", json.dumps(body))


class TestOpenAIChatContract(AdapterContract):
    protocol = "openai_chat"
    TRANSCRIPT = TRANSCRIPT
    expected_text = "Foo bar!"
    expected_usage = Usage(input_tokens=9, output_tokens=3, reasoning_tokens=0, cached_tokens=0)
    key_header = "authorization"
    default_max_field = "max_tokens"
    rate_limit_body = {
        "error": {
            "message": "Rate limit reached for gpt-4o. Please try again in 1.574s.",
            "type": "tokens",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    sim_on_openai_base = True


def test_it_requests_usage_and_streaming() -> None:
    spec = adapter.build_request(TestOpenAIChatContract().config(), prompt="Hi", max_tokens=9)
    assert spec.url == "https://api.example.test/v1/chat/completions"
    assert spec.json["stream"] is True
    assert spec.json["stream_options"] == {"include_usage": True}
    assert spec.json["messages"] == [{"role": "user", "content": "Hi"}]
    assert spec.headers["authorization"].startswith("Bearer ")


@pytest.mark.parametrize("model", ["o3-mini", "o1", "gpt-5", "gpt-5-mini", "openai/o4-mini"])
def test_it_sends_max_completion_tokens_to_openai_reasoning_models(model: str) -> None:
    spec = adapter.build_request(
        TestOpenAIChatContract().config(model=model), prompt="x", max_tokens=50
    )
    assert spec.json["max_completion_tokens"] == 50
    assert "max_tokens" not in spec.json


@pytest.mark.parametrize("model", ["gpt-4o", "llama-3.3-70b-versatile", "Qwen/Qwen3-8B", "grok-4"])
def test_it_sends_max_tokens_to_other_models(model: str) -> None:
    spec = adapter.build_request(
        TestOpenAIChatContract().config(model=model), prompt="x", max_tokens=50
    )
    assert spec.json["max_tokens"] == 50


def test_it_passes_reasoning_effort_and_deep_merges_stream_options() -> None:
    config = TestOpenAIChatContract().config(
        reasoning_effort="high", extra_body={"stream_options": {"continuous_usage_stats": True}}
    )
    spec = adapter.build_request(config, prompt="x", max_tokens=5)
    assert spec.json["reasoning_effort"] == "high"
    assert spec.json["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}


def test_it_reads_vllm_reasoning_and_continuous_usage() -> None:
    items = parse_bytes("openai_chat", VLLM)
    deltas = [i for i in items if isinstance(i, Delta)]
    assert deltas[0] == Delta("Okay", reasoning=True)
    assert "".join(d.text for d in deltas if not d.reasoning) == "Hello world!"
    assert merged_usage(items) == Usage(12, 10, 7, None)


def test_it_reads_llamacpp_null_role_content_and_final_usage() -> None:
    items = parse_bytes("openai_chat", LLAMACPP)
    assert "".join(i.text for i in items if isinstance(i, Delta)) == "Hello!"
    assert merged_usage(items) == Usage(9, 3, None, None)
    assert isinstance(items[-1], End)


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning", "reasoning_text"])
def test_it_reads_every_reasoning_field_name(key: str) -> None:
    assert adapter.parse(chunk({key: "thinking"})) == [Delta("thinking", reasoning=True)]


def test_it_emits_reasoning_once_when_sent_under_two_names() -> None:
    event = chunk({"reasoning": "same", "reasoning_content": "same"})
    assert adapter.parse(event) == [Delta("same", reasoning=True)]


def test_it_ignores_the_azure_prompt_filter_chunk() -> None:
    event = chunk(id="", model="", choices=[], prompt_filter_results=[{"prompt_index": 0}])
    assert adapter.parse(event) == []


def test_it_reads_usage_on_the_last_content_chunk_like_mistral_and_together() -> None:
    event = chunk(
        {"content": " end"},
        finish="eos",
        usage={"prompt_tokens": 5, "completion_tokens": 17, "total_tokens": 22},
    )
    assert adapter.parse(event) == [Delta(" end"), Usage(5, 17, None, None), Finish("eos", "")]


def test_it_reads_groq_x_groq_usage_and_error() -> None:
    usage = {"prompt_tokens": 40, "completion_tokens": 120, "total_tokens": 160, "queue_time": 0.01}
    items = adapter.parse(chunk({}, finish="stop", x_groq={"id": "req_1", "usage": usage}))
    assert Usage(40, 120, None, None) in items
    items = adapter.parse(chunk(x_groq={"id": "req_1", "error": "stream interrupted"}))
    assert len(items) == 1 and isinstance(items[0], StreamError)
    assert items[0].category == ErrorCategory.STREAM_BROKEN


def test_it_reads_deepseek_cache_hits() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 3, "prompt_cache_hit_tokens": 64}
    assert adapter.parse(chunk(choices=[], usage=usage)) == [Usage(100, 3, None, 64)]


def test_it_drops_openrouter_processing_comments() -> None:
    stream = b": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n" + TRANSCRIPT
    assert parse_bytes("openai_chat", stream) == parse_bytes("openai_chat", TRANSCRIPT)


@pytest.mark.parametrize(
    ("reason", "outcome"),
    [
        ("stop", ""),
        ("tool_calls", ""),
        ("eos", ""),
        ("length", ErrorCategory.TRUNCATED),
        ("model_length", ErrorCategory.TRUNCATED),
        ("content_filter", ErrorCategory.CONTENT_FILTERED),
        ("error", ErrorCategory.SERVER_ERROR),
        ("abort", ErrorCategory.STREAM_BROKEN),
    ],
)
def test_it_classifies_finish_reasons(reason: str, outcome: str) -> None:
    assert adapter.parse(chunk({}, finish=reason)) == [Finish(reason, outcome)]


@pytest.mark.parametrize(
    ("payload", "category"),
    [
        ({"error": {"message": "The server had an error", "type": "server_error"}}, "server_error"),
        (
            {
                "error": {
                    "message": "busy",
                    "type": "service_unavailable_error",
                    "code": "server_is_overloaded",
                }
            },
            "overloaded",
        ),
        (
            {"object": "error", "message": "bad", "type": "BadRequestError", "code": 400},
            "bad_request",
        ),
        ({"error": {"message": "upstream failed", "code": 502}}, "server_error"),
        (
            {"error": {"message": "Rate limit exceeded: free-models-per-min", "code": 429}},
            "rate_limited",
        ),
    ],
)
def test_it_classifies_mid_stream_error_objects(payload: dict[str, Any], category: str) -> None:
    items = adapter.parse(SSEEvent("message", json.dumps(payload)))
    assert len(items) == 1 and isinstance(items[0], StreamError)
    assert items[0].category == category


def test_it_classifies_an_unsupported_parameter_as_bad_request() -> None:
    body = {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    }
    error = adapter.classify_http_error(400, {}, json.dumps(body).encode())
    assert error.category == ErrorCategory.BAD_REQUEST
    assert "Unsupported parameter" in error.message and error.http_status == 400


def test_it_counts_tokens_from_llamacpp_timings_when_no_usage_is_sent() -> None:
    timings = {
        "cache_n": 4,
        "prompt_n": 9,
        "prompt_ms": 35.1,
        "predicted_n": 42,
        "predicted_ms": 500.0,
    }
    items = adapter.parse(chunk({}, finish="stop", timings=timings))
    assert items == [Usage(input_tokens=13, output_tokens=42, cached_tokens=4), Finish("stop", "")]
    # Reported usage wins over the server's timings when both are there.
    both = adapter.parse(
        chunk(choices=[], usage={"prompt_tokens": 13, "completion_tokens": 41}, timings=timings)
    )
    assert both == [Usage(13, 41, None, None)]


def test_it_ignores_token_counts_that_are_not_finite_numbers() -> None:
    # json.loads accepts NaN and Infinity; a relay that sends them must not crash the parser.
    data = '{"choices":[],"usage":{"prompt_tokens":NaN,"completion_tokens":Infinity}}'
    items = adapter.parse(SSEEvent("message", data))
    assert items == [Usage(input_tokens=None, output_tokens=None)]
