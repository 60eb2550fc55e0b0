"""Whatever bytes a provider sends, the measurement ends in a sample the database stores.

Each protocol's recorded stream is mutated by Hypothesis (any leaf replaced by odd text, lone
surrogate halves, NUL, huge or negative numbers, NaN, wrong types; events dropped; reads cut at
any byte), run through the real decoder, adapter and Recorder, and every resulting sample is
inserted into PostgreSQL.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.db import DataError, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.measure import Measurement
from benchmarks.measure.bounds import MAX_TOKEN_COUNT
from benchmarks.measure.recorder import Recorder
from benchmarks.models import Sample
from providers.base import ErrorCategory
from providers.registry import ADAPTERS, get_adapter, stream_format
from providers.simulator.protocols.bedrock import event_headers, frame
from tests.api_factories import make_endpoint, make_provider, make_run
from tests.fault_helpers import BadBytesProvider
from tests.measure.test_speedtest import run_manage
from tests.stream_shapes import KEY, STAMP_STEP_NS, Shape, chat, measure_served, usage_chunk

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "transcripts"
SSE_TRANSCRIPTS = {
    "openai_chat": "vllm_chat.sse",
    "azure_openai": "openai_chat.sse",
    "openai_responses": "openai_responses_reasoning.sse",
    "azure_openai_responses": "openai_responses.sse",
    "anthropic_messages": "anthropic_thinking.sse",
    "vertex_anthropic": "anthropic_messages.sse",
    "gemini": "gemini.sse",
    "vertex_gemini": "gemini.sse",
}
BEDROCK_EVENTS = [
    ("messageStart", {"role": "assistant"}),
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "hm"}}}),
    ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Hello there"}}),
    ("contentBlockStop", {"contentBlockIndex": 1}),
    ("messageStop", {"stopReason": "end_turn"}),
    (
        "metadata",
        {
            "usage": {"inputTokens": 9, "outputTokens": 4, "totalTokens": 13},
            "metrics": {"latencyMs": 120},
        },
    ),
]
NASTY = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["\ud83d", "\ude00", "\x00", "\ud83d\ude00", "x" * 500]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([3_000_000_000, -1, MAX_TOKEN_COUNT + 1, 2**31]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def template(protocol: str) -> list[tuple[str, Any]]:
    """(event name, JSON payload or raw data) of a real stream of `protocol`."""
    if protocol == "bedrock_converse":
        return list(BEDROCK_EVENTS)
    events = []
    for block in (TRANSCRIPTS / SSE_TRANSCRIPTS[protocol]).read_text().split("\n\n"):
        lines = [line for line in block.splitlines() if line]
        if not lines:
            continue
        name = next((ln[6:].strip() for ln in lines if ln.startswith("event:")), "")
        data = "\n".join(ln[5:].strip() for ln in lines if ln.startswith("data:"))
        try:
            events.append((name, json.loads(data)))
        except ValueError:
            events.append((name, data))  # [DONE]
    return events


def mutate(value: Any, data: st.DataObject) -> Any:
    """`value` with some of its leaves (or whole branches) replaced by NASTY values."""
    if data.draw(st.integers(0, 9), label="replace?") == 0:
        return data.draw(NASTY, label="nasty")
    if isinstance(value, dict):
        return {key: mutate(item, data) for key, item in value.items()}
    if isinstance(value, list):
        return [mutate(item, data) for item in value]
    return value


def encode(protocol: str, events: list[tuple[str, Any]]) -> bytes:
    if protocol == "bedrock_converse":
        return b"".join(
            frame(event_headers(name), json.dumps(body).encode()) for name, body in events
        )
    out = []
    for name, body in events:
        text = body if isinstance(body, str) else json.dumps(body)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode("utf-8", "surrogatepass")  # lone halves as invalid UTF-8


@st.composite
def fuzzed_reads(draw: Any, protocol: str) -> list[bytes]:
    data = draw(st.data())
    events = [(name, mutate(body, data)) for name, body in template(protocol)]
    keep = draw(st.lists(st.booleans(), min_size=len(events), max_size=len(events)))
    body = encode(protocol, [e for e, kept in zip(events, keep, strict=True) if kept or e[0]])
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=4)))
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def record(protocol: str, reads: list[bytes]) -> Measurement:
    """The Recorder's measurement of `reads`, one network read each, as request.py makes it."""
    adapter = get_adapter(protocol)
    recorder = Recorder(adapter, started_at=datetime(2026, 1, 1, tzinfo=UTC), t0_ns=0)
    recorder.http_status = 200
    decoder = stream_format(adapter)[1]()
    for ns, read in enumerate(reads, start=1):
        for event in decoder.feed(read):
            recorder.on_event(event, ns * STAMP_STEP_NS)
            if recorder.stopped:
                return recorder.result(secrets=(KEY,))
    recorder.end_ns = recorder.last_data_ns
    return recorder.result(secrets=(KEY,))


def store(measured: list[Measurement]) -> int:
    """Insert every measurement as a sample of one run; a refused one fails with its values."""
    run = make_run(make_endpoint(make_provider()), datetime(2026, 1, 1, tzinfo=UTC))
    for index, m in enumerate(measured):
        try:
            with transaction.atomic():
                Sample.objects.create(run=run, slot=run.slot, index=index, **m.sample_values())
        except DataError as exc:
            pytest.fail(f"PostgreSQL refused a sample: {exc}\n{m.sample_values()}")
    return run.samples.count()


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", sorted(ADAPTERS))
def test_it_turns_any_generated_stream_into_a_sample_postgresql_stores(protocol: str) -> None:
    measured: list[Measurement] = []

    @settings(
        max_examples=30,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(fuzzed_reads(protocol))
    def fuzz(reads: list[bytes]) -> None:
        m = record(protocol, reads)  # never raises, whatever the bytes
        assert m.error_category in ("", *ErrorCategory.ERRORS), m.error_category
        assert KEY not in m.error_message
        measured.append(m)

    fuzz()
    assert store(measured) == len(measured), "every generated stream is stored as a sample"


def test_it_joins_an_emoji_split_across_two_json_chunks_into_one_character() -> None:
    first = chat({"content": "\ud83d"})
    second = chat({"content": "\ude00 hi"}, finish="stop")
    end = usage_chunk(3) + b"data: [DONE]\n\n"
    m = record("openai_chat", [first, second, end])
    assert m.ok, m.error_message
    assert m.output_chars == len("\N{GRINNING FACE} hi"), "the pair is one character, not two"


def test_it_keeps_a_lone_surrogate_as_a_replacement_character_and_the_sample_ok() -> None:
    m = record("openai_chat", [chat({"content": "a\ud83d"}, finish="stop"), b"data: [DONE]\n\n"])
    assert m.ok, m.error_message
    assert m.output_chars == 2


def test_it_fails_only_the_sample_that_reports_three_billion_prompt_tokens() -> None:
    shape = Shape(
        "openai_chat",
        chat({"content": "hi"}) + usage_chunk(2, prompt=3_000_000_000) + b"data: [DONE]\n\n",
    )
    m, _ = measure_served(shape)
    assert m.error_category == ErrorCategory.STREAM_BROKEN
    assert m.error_message.startswith("malformed usage: input_tokens = 3000000000"), m.error_message
    assert m.ttft_ms is not None and m.input_tokens is None, "timings kept, the count dropped"


EMOJI_SPLIT = (
    chat({"content": "\ud83d"})
    + chat({"content": "\ude00 fine"}, finish="stop")
    + usage_chunk(3)
    + b"data: [DONE]\n\n"
)
ABSURD_USAGE = (
    chat({"content": "hi"}, finish="stop")
    + usage_chunk(2, prompt=3_000_000_000)
    + b"data: [DONE]\n\n"
)


def test_it_prints_one_line_not_a_traceback_when_speedtest_meets_bad_bytes() -> None:
    with BadBytesProvider([ABSURD_USAGE]) as provider:
        result = run_manage(
            "--base-url", provider.base_url, "--protocol", "openai_chat", "--model", "m",
            "--repeat", "1",
        )  # fmt: skip

    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "stream_broken: malformed usage: input_tokens = 3000000000" in result.stderr


def test_it_prints_the_emoji_sample_as_ok_in_speedtest() -> None:
    with BadBytesProvider([EMOJI_SPLIT]) as provider:
        result = run_manage(
            "--base-url", provider.base_url, "--protocol", "openai_chat", "--model", "m",
            "--repeat", "1", "--json",
        )  # fmt: skip

    assert result.returncode == 0, result.stderr
    [sample] = json.loads(result.stdout)["samples"]
    assert sample["error_category"] == "", sample["error_message"]
    assert sample["output_chars"] == len("\N{GRINNING FACE} fine")
