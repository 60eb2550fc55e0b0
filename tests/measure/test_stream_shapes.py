"""Stream shapes real servers send (issue 12), each fed through the whole measurement: split at
every byte into two reads, and served over a real loopback socket one byte per write."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.measure import Limits, Measurement
from benchmarks.stats import summarize
from providers.base import ErrorCategory, ReasoningMode
from providers.tokens import estimate_tokens
from tests.stream_shapes import (
    KEY,
    Shape,
    anthropic,
    chat,
    measure_served,
    record_split,
    responses,
    sse,
    usage_chunk,
)

DONE = sse("[DONE]")
ROLE = chat({"role": "assistant", "content": "", "refusal": None})
# What a measurement must say the same way however the bytes were split or delivered.
FIELDS = (
    "output_chars",
    "output_sha256",
    "outcome",
    "error_category",
    "reasoning_mode",
    "output_tokens",
    "tokens_source",
    "reasoning_tokens",
    "finish_reason",
    "retry_after_s",
)

REFUSAL = Shape(
    "openai_chat",
    ROLE
    + chat({"refusal": "I'm sorry, "})
    + chat({"refusal": "I can't help with that."})
    + chat({}, finish="stop")
    + usage_chunk(9)
    + DONE,
)
MISTRAL_PARTS = Shape(
    "openai_chat",
    ROLE
    + chat({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Two and "}]}]})
    + chat({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "two."}]}]})
    + chat({"content": [{"type": "text", "text": "It is "}]})
    + chat({"content": [{"type": "text", "text": "four."}]})
    + chat({}, finish="stop")
    + usage_chunk(9)
    + DONE,
)
THINK_TAGS = Shape(
    "openai_chat",
    ROLE
    + chat({"content": "<th"})
    + chat({"content": "ink>\nLet me "})
    + chat({"content": "add them.</th"})
    + chat({"content": "ink>\n\n"})
    + chat({"content": "The answer"})
    + chat({"content": " is 4."})
    + chat({}, finish="stop")
    + usage_chunk(12)
    + DONE,
)
# llama.cpp with a reasoning model (--reasoning-format deepseek): the reasoning streams in full,
# a token per chunk, under `reasoning_content`; its usage counts every token without a reasoning
# split. Qwen's and DeepSeek's tokenizers give each digit a token: far more tokens than the
# text's estimate, which must not make the streamed reasoning look like a summary.
_DIGITS = ["Multiply", " 9", "8", "7", "6", "5", "4", "3", "2", "1", " by", " 1", "2", "3",
           "4", "5", "6", "7", "8", "9", ":", " 1", "2", "1", "9", "3", "2", "6", "3", "1", "1",
           "2", "6", "3", "5", "2", "6", "9", "0", "0", "0", "0", "0", "0"]  # fmt: skip
_LLAMACPP_TIMINGS = {"prompt_n": 9, "predicted_n": len(_DIGITS), "predicted_per_second": 50.0}
LLAMACPP_REASONING = Shape(
    "openai_chat",
    ROLE
    + b"".join(chat({"reasoning_content": piece}) for piece in _DIGITS)
    + chat({"content": "About 1.2e17."})
    + chat({}, finish="stop")
    + chat(choices=[], usage={"prompt_tokens": 9, "completion_tokens": len(_DIGITS) + 6,
                              "total_tokens": len(_DIGITS) + 15}, timings=_LLAMACPP_TIMINGS)
    + DONE,
)  # fmt: skip
LLAMACPP_REASONING_TRUNCATED = Shape(  # max_tokens spent before the answer began
    "openai_chat",
    ROLE
    + b"".join(chat({"reasoning_content": piece}) for piece in _DIGITS)
    + chat({}, finish="length")
    + chat(choices=[], usage={"prompt_tokens": 9, "completion_tokens": len(_DIGITS),
                              "total_tokens": len(_DIGITS) + 9}, timings=_LLAMACPP_TIMINGS)
    + DONE,
)  # fmt: skip
OPENROUTER_ERROR_WITH_USAGE = Shape(
    "openai_chat",
    ROLE
    + chat({"content": "Partial answer"})
    + chat({"content": " text"})
    + chat(
        choices=[{"index": 0, "delta": {"content": ""}, "finish_reason": "length"}],
        usage={
            "prompt_tokens": 9,
            "completion_tokens": 120,
            "total_tokens": 129,
            "completion_tokens_details": {"reasoning_tokens": 100},
        },
        error={"code": 502, "message": "Provider returned error"},
    )
    + DONE,
)
CHAT_RATE_LIMIT_IN_STREAM = Shape(
    "openai_chat",
    ROLE
    + chat({"content": "Hi"})
    + sse(
        {
            "error": {
                "message": "Rate limit reached for requests. Please try again in 11.054s.",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
        }
    ),
)
RESPONSES_FAILED_WITH_HINT = Shape(
    "openai_responses",
    responses("response.created", response={"id": "r1", "status": "in_progress"})
    + responses("response.output_text.delta", delta="Hi")
    + responses(
        "response.failed",
        response={
            "id": "r1",
            "status": "failed",
            "error": {
                "code": "rate_limit_exceeded",
                "message": "Rate limit reached. Please try again in 2.5s.",
            },
        },
    ),
)
_TEXT_BLOCK = anthropic("content_block_start", index=1, content_block={"type": "text", "text": ""})
_ANSWER = "".join(
    anthropic("content_block_delta", index=1, delta={"type": "text_delta", "text": text}).decode()
    for text in ("Hello world, ", "this is the answer ", "to your question.")
).encode()
_ANTHROPIC_END = (
    anthropic("content_block_stop", index=1)
    + anthropic("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 300})
    + anthropic("message_stop")
)
_MESSAGE_START = anthropic(
    "message_start",
    message={"id": "m1", "usage": {"input_tokens": 10, "output_tokens": 1}},
)
ANTHROPIC_REDACTED = Shape(
    "anthropic_messages",
    _MESSAGE_START
    + anthropic(
        "content_block_start",
        index=0,
        content_block={"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
    )
    + anthropic("content_block_stop", index=0)
    + _TEXT_BLOCK
    + _ANSWER
    + _ANTHROPIC_END,
)
ANTHROPIC_OMITTED_THINKING = Shape(
    "anthropic_messages",
    _MESSAGE_START
    + anthropic(
        "content_block_start",
        index=0,
        content_block={"type": "thinking", "thinking": "", "signature": ""},
    )
    + anthropic(
        "content_block_delta",
        index=0,
        delta={"type": "signature_delta", "signature": "c3ludGhldGlj"},
    )
    + anthropic("content_block_stop", index=0)
    + _TEXT_BLOCK
    + _ANSWER
    + _ANTHROPIC_END,
)
RESPONSES_SUMMARY = Shape(
    "openai_responses",
    responses("response.created", response={"id": "r1", "status": "in_progress"})
    + responses("response.reasoning_summary_part.added", item_id="rs_1", summary_index=0)
    + responses("response.reasoning_summary_text.delta", delta="**Comparing**")
    + responses("response.reasoning_summary_text.delta", delta=" the numbers")
    + responses("response.output_text.delta", delta="Nine point nine ")
    + responses("response.output_text.delta", delta="is larger ")
    + responses("response.output_text.delta", delta="than nine point one one.")
    + responses(
        "response.completed",
        response={
            "status": "completed",
            "usage": {
                "input_tokens": 20,
                "output_tokens": 400,
                "output_tokens_details": {"reasoning_tokens": 380},
            },
        },
    ),
)
CHAT_HIDDEN_REASONING = Shape(
    "openai_chat",
    ROLE
    + chat({"content": "Nine point nine "})
    + chat({"content": "is larger "})
    + chat({"content": "than nine point one one."})
    + chat({}, finish="stop")
    + usage_chunk(310, reasoning=300)
    + DONE,
)
GEMINI_OTHER = Shape(
    "gemini",
    sse({"candidates": [{"content": {"parts": [{"text": "Once upon"}], "role": "model"}}]})
    + sse(
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": " a time"}], "role": "model"},
                    "finishReason": "OTHER",
                }
            ],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 4},
        }
    ),
)
ANTHROPIC_DATA_ONLY_PINGS = Shape(
    "anthropic_messages",
    sse({"type": "ping"})
    + _MESSAGE_START
    + sse({"type": "ping"})
    + _TEXT_BLOCK
    + _ANSWER
    + sse({"type": "ping"})
    + _ANTHROPIC_END,
)

SHAPES = {
    "chat_refusal": REFUSAL,
    "mistral_content_parts": MISTRAL_PARTS,
    "think_tags": THINK_TAGS,
    "openrouter_error_with_usage": OPENROUTER_ERROR_WITH_USAGE,
    "chat_retry_hint_in_stream": CHAT_RATE_LIMIT_IN_STREAM,
    "responses_failed_with_hint": RESPONSES_FAILED_WITH_HINT,
    "anthropic_redacted_thinking": ANTHROPIC_REDACTED,
    "anthropic_omitted_thinking": ANTHROPIC_OMITTED_THINKING,
    "responses_reasoning_summary": RESPONSES_SUMMARY,
    "chat_hidden_reasoning": CHAT_HIDDEN_REASONING,
    "gemini_finish_other": GEMINI_OTHER,
    "anthropic_data_only_pings": ANTHROPIC_DATA_ONLY_PINGS,
    "llamacpp_reasoning": LLAMACPP_REASONING,
    "llamacpp_reasoning_truncated": LLAMACPP_REASONING_TRUNCATED,
}


def fields(m: Measurement) -> dict[str, Any]:
    return {name: getattr(m, name) for name in FIELDS}


@pytest.mark.parametrize("name", SHAPES)
def test_it_measures_each_shape_the_same_however_its_bytes_are_split(name: str) -> None:
    shape = SHAPES[name]
    whole = fields(record_split(shape, shape.body))
    for cut in range(1, len(shape.body)):
        split = record_split(shape, shape.body[:cut], shape.body[cut:])
        assert fields(split) == whole, f"{name} split at byte {cut}"


@pytest.mark.parametrize("name", SHAPES)
def test_it_measures_each_shape_served_one_byte_at_a_time(name: str) -> None:
    shape = SHAPES[name]
    served, _ = measure_served(shape)
    assert fields(served) == fields(record_split(shape, *shape.events()))
    assert served.ttft_ms is not None and served.first_event_ms <= served.ttft_ms
    assert KEY not in str(served.as_dict())


def test_it_keeps_a_refusals_timings_and_decode_speed_but_no_statistics() -> None:
    m, _ = measure_served(REFUSAL)
    assert m.outcome == ErrorCategory.REFUSED and m.ok and m.finish_reason == "stop"
    assert m.output_chars == len("I'm sorry, I can't help with that.")
    assert m.ttft_ms is not None and m.ttfa_ms == m.ttft_ms and m.last_token_ms > m.ttft_ms
    # Its 9 tokens streamed: the sample says how fast, the run's speed figures leave it out.
    window_s = (m.last_token_ms - m.ttft_ms) / 1000
    assert m.decode_tps == pytest.approx((9 - 1) / window_s), "a streamed refusal has a speed"
    assert m.tpot_ms == pytest.approx(1000 / m.decode_tps)
    summary = summarize([m])
    assert summary["outcomes"] == {ErrorCategory.REFUSED: 1}
    assert summary.get("decode_tps") is None, f"a refusal entered speed statistics: {summary}"


@pytest.mark.parametrize("shape", [LLAMACPP_REASONING, LLAMACPP_REASONING_TRUNCATED])
def test_it_times_llamacpps_streamed_reasoning_as_decode(shape: Shape) -> None:
    m = record_split(shape, *shape.events())
    assert m.reasoning_mode == ReasoningMode.STREAMED, "full reasoning read as a summary"
    assert m.tokens_source == "usage" and m.reasoning_tokens is None
    window_s = (m.last_token_ms - m.ttft_ms) / 1000  # every output token, from the first
    assert m.decode_tps == pytest.approx((m.output_tokens - 1) / window_s), (
        f"decode {m.decode_tps} for {m.output_tokens} tokens over {window_s} s"
    )


def test_it_reads_mistral_thinking_parts_as_reasoning_and_text_parts_as_the_answer() -> None:
    m = record_split(MISTRAL_PARTS, *MISTRAL_PARTS.events())
    assert m.reasoning_mode == ReasoningMode.STREAMED
    assert m.output_chars == len("It is four.")
    assert m.ttft_ms == 2.0 and m.ttfa_ms == 4.0  # read 2: first thinking part; 4: first text


def test_it_splits_think_tags_off_the_answer_and_times_the_answer_after_them() -> None:
    m = record_split(THINK_TAGS, *THINK_TAGS.events())
    assert m.reasoning_mode == ReasoningMode.STREAMED
    assert m.output_chars == len("The answer is 4.")
    assert m.ttft_ms == 2.0  # "<th" is the first generated text
    assert m.ttfa_ms == 6.0  # "The answer", after "</think>" and its blank lines
    served, _ = measure_served(THINK_TAGS)
    assert served.output_sha256 == m.output_sha256 and served.ttfa_ms > served.ttft_ms


def test_it_keeps_openrouters_usage_when_an_error_ends_the_stream() -> None:
    m, _ = measure_served(OPENROUTER_ERROR_WITH_USAGE)
    assert m.error_category == ErrorCategory.SERVER_ERROR and "Provider returned error" in (
        m.error_message
    )
    # finish_reason length came with the error: the error decides, the truncation is kept.
    assert (m.finish_reason, m.outcome) == ("length", ErrorCategory.TRUNCATED)
    assert (m.output_tokens, m.reasoning_tokens, m.tokens_source) == (120, 100, "usage")
    assert m.decode_tps is None and m.ttft_ms is not None


@pytest.mark.parametrize(
    ("shape", "category", "wait_s"),
    [
        (CHAT_RATE_LIMIT_IN_STREAM, ErrorCategory.RATE_LIMITED, 11.054),
        (RESPONSES_FAILED_WITH_HINT, ErrorCategory.RATE_LIMITED, 2.5),
    ],
)
def test_it_reads_retry_hints_written_only_in_the_message(
    shape: Shape, category: str, wait_s: float
) -> None:
    m, _ = measure_served(shape)
    assert (m.error_category, m.retry_after_s) == (category, wait_s)
    assert m.ttft_ms is not None


@pytest.mark.parametrize(
    ("shape", "category", "wait_s", "message"),
    [
        (
            Shape(
                "gemini",
                b'[{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check '
                b'quota).", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.google'
                b'apis.com/google.rpc.RetryInfo", "retryDelay": "31s"}]}}]',
                status=429,
            ),
            ErrorCategory.RATE_LIMITED,
            31.0,
            "HTTP 429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).",
        ),
        (
            Shape(
                "gemini",
                b'[{"error": {"code": 400, "message": "API key not valid.", "status": '
                b'"INVALID_ARGUMENT", "details": [{"reason": "API_KEY_INVALID"}]}}]',
                status=400,
            ),
            ErrorCategory.AUTH,
            None,
            "HTTP 400 INVALID_ARGUMENT: API key not valid.",
        ),
        (
            Shape(
                "openai_chat",
                b'{"error": {"message": "Rate limit reached for gpt-4o on tokens per min. '
                b'Please try again in 1m12.5s.", "type": "tokens", "code": "rate_limit_exceeded"}}',
                status=429,
            ),
            ErrorCategory.RATE_LIMITED,
            72.5,
            None,
        ),
    ],
)
def test_it_classifies_error_bodies_and_keeps_their_retry_delay(
    shape: Shape, category: str, wait_s: float | None, message: str | None
) -> None:
    m, _ = measure_served(shape)
    assert (m.error_category, m.http_status, m.retry_after_s) == (category, shape.status, wait_s)
    if message is not None:
        assert m.error_message == message


@pytest.mark.parametrize(
    ("shape", "mode", "answer_tokens"),
    [
        (ANTHROPIC_REDACTED, ReasoningMode.HIDDEN, None),
        (ANTHROPIC_OMITTED_THINKING, ReasoningMode.HIDDEN, None),
        (RESPONSES_SUMMARY, ReasoningMode.SUMMARIZED, 400 - 380),
        (CHAT_HIDDEN_REASONING, ReasoningMode.HIDDEN, 310 - 300),
    ],
)
def test_it_counts_only_answer_tokens_from_ttfa_when_reasoning_did_not_stream(
    shape: Shape, mode: str, answer_tokens: int | None
) -> None:
    m = record_split(shape, *shape.events())
    assert m.reasoning_mode == mode
    if answer_tokens is None:  # Anthropic does not say how many of its tokens were thinking
        answer = "Hello world, this is the answer to your question."
        answer_tokens = estimate_tokens(answer)
    window_s = (m.last_token_ms - m.ttfa_ms) / 1000
    assert m.decode_tps == pytest.approx((answer_tokens - 1) / window_s)
    assert m.tpot_ms == pytest.approx(1000 / m.decode_tps)


def test_it_marks_a_gemini_finish_reason_other_as_an_error_with_its_timings() -> None:
    m, _ = measure_served(GEMINI_OTHER)
    assert m.error_category == ErrorCategory.SERVER_ERROR and "OTHER" in m.error_message
    assert m.ttft_ms is not None and m.output_chars == len("Once upon a time")


def test_it_never_lets_a_data_only_ping_start_a_clock() -> None:
    m = record_split(ANTHROPIC_DATA_ONLY_PINGS, *ANTHROPIC_DATA_ONLY_PINGS.events())
    assert m.ok and m.first_event_ms == 2.0  # message_start, not the ping read at 1 ms


def test_it_never_lets_a_data_only_ping_reset_the_idle_timer() -> None:
    pings = Shape(
        "anthropic_messages",
        _MESSAGE_START + _TEXT_BLOCK + _ANSWER + sse({"type": "ping"}) * 40,
        event_pause_s=0.05,  # 2 s of pings, far past the 0.5 s idle limit
    )
    limits = Limits(connect_timeout_s=2, idle_timeout_s=0.5, deadline_s=30)
    m, _ = measure_served(pings, limits=limits)
    assert m.error_category == ErrorCategory.STREAM_BROKEN and "idle" in m.error_message
    assert m.total_ms - m.last_token_ms < 500 + 300


_MINIMAL = {
    "openai_chat": REFUSAL,
    "openai_responses": RESPONSES_SUMMARY,
    "anthropic_messages": ANTHROPIC_REDACTED,
    "gemini": GEMINI_OTHER,
}


@pytest.mark.parametrize(
    ("protocol", "base_path", "path"),
    [
        ("anthropic_messages", "", "/v1/messages"),
        ("anthropic_messages", "/v1", "/v1/messages"),
        ("anthropic_messages", "/api/v1/", "/api/v1/messages"),
        ("openai_chat", "", "/v1/chat/completions"),
        ("openai_chat", "/v1", "/v1/chat/completions"),
        ("openai_chat", "/v1beta/openai", "/v1beta/openai/chat/completions"),
        ("openai_responses", "", "/v1/responses"),
        ("openai_responses", "/v1", "/v1/responses"),
        ("gemini", "", "/v1beta/models/m-1:streamGenerateContent?alt=sse"),
        ("gemini", "/v1beta", "/v1beta/models/m-1:streamGenerateContent?alt=sse"),
        ("gemini", "/v1", "/v1/models/m-1:streamGenerateContent?alt=sse"),
    ],
)
def test_it_accepts_a_base_url_with_or_without_its_version_path(
    protocol: str, base_path: str, path: str
) -> None:
    m, paths = measure_served(_MINIMAL[protocol], base_path=base_path)
    assert paths == [path]
    assert m.http_status == 200 and m.ttft_ms is not None
