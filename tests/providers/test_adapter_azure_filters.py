"""Azure OpenAI's content filter over real loopback sockets: the filter stop, and the larger
chunks and late annotations of its asynchronous filter mode, from the simulator's Azure face."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from benchmarks.measure import Limits, Measurement, measure_request
from benchmarks.measure.http.transport import make_client
from providers.base import Delta, EndpointConfig, ErrorCategory, Finish, Usage
from tests.adapter_contract import merged_usage, parse_bytes, stream
from tests.stream_shapes import Shape, measure_served

LIMITS = Limits(connect_timeout_s=5, idle_timeout_s=5, deadline_s=10, max_bytes=1 << 20)

# Azure's asynchronous filter mode as its documentation shows it (shortened): the prompt-filter
# chunk, text chunks without filter results, annotation chunks of their own (no delta) that
# cover text sent earlier, the last one after the stop, then usage and [DONE].
_SAFE = (
    b'{"hate":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}'
)
_ANNOTATION = (
    b'data: {"choices":[{"content_filter_offsets":{"check_offset":%d,"start_offset":%d,'
    b'"end_offset":%d},"content_filter_results":' + _SAFE + b',"finish_reason":null,"index":0}],'
    b'"created":0,"id":"","model":"","object":""}\n\n'
)
_TEXT = (
    b'data: {"choices":[{"delta":{"content":"%s"},"finish_reason":null,"index":0}],'
    b'"created":1692905411,"id":"chatcmpl-7rCNs","model":"gpt-4o","object":"chat.completion.chunk",'
    b'"usage":null}\n\n'
)
AZURE_ASYNC_STREAM = b"".join(
    [
        b'data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":'
        b'[{"prompt_index":0,"content_filter_results":' + _SAFE + b"}]}\n\n",
        b'data: {"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":null,'
        b'"index":0}],"created":1692905411,"id":"chatcmpl-7rCNs","model":"gpt-4o",'
        b'"object":"chat.completion.chunk","usage":null}\n\n',
        _TEXT % b"Color is the characteristic",
        _TEXT % b" of visual perception described",
        _ANNOTATION % (0, 0, 58),
        _TEXT % b" through color categories.",
        b'data: {"choices":[{"delta":{},"finish_reason":"stop","index":0}],"created":1692905411,'
        b'"id":"chatcmpl-7rCNs","model":"gpt-4o","object":"chat.completion.chunk","usage":null}\n\n',
        _ANNOTATION % (58, 58, 84),
        b'data: {"choices":[],"created":1692905411,"id":"chatcmpl-7rCNs","model":"gpt-4o",'
        b'"object":"chat.completion.chunk","usage":{"completion_tokens":14,"prompt_tokens":9,'
        b'"total_tokens":23}}\n\n',
        b"data: [DONE]\n\n",
    ]
)

# The same mode when the verdict on the last text, arriving after the stop, flags it.
_FLAGGED = (
    b'{"hate":{"filtered":false,"severity":"safe"},'
    b'"violence":{"filtered":true,"severity":"medium"}}'
)
AZURE_ASYNC_LATE_FLAG = AZURE_ASYNC_STREAM.replace(
    _ANNOTATION % (58, 58, 84), _ANNOTATION.replace(_SAFE, _FLAGGED) % (58, 58, 84)
)


def azure(sim: Any, model: str, protocol: str = "azure_openai") -> EndpointConfig:
    base_url = sim.openai_base if protocol == "openai_chat" else sim.base_url
    return EndpointConfig(base_url=base_url, protocol=protocol, model=model, api_key="azure-key")


def measure(config: EndpointConfig) -> Measurement:
    async def run() -> Measurement:
        async with make_client(limits=LIMITS, max_connections=1) as client:
            return await measure_request(client, config, prompt="Hi", max_tokens=400, limits=LIMITS)

    return asyncio.run(run())


def test_it_reads_the_async_filter_shape_however_the_bytes_are_split() -> None:
    whole = parse_bytes("azure_openai", AZURE_ASYNC_STREAM)
    texts = [i for i in whole if isinstance(i, Delta)]
    # Three text chunks, the annotations yield nothing: they are not tokens.
    assert [t.text for t in texts] == [
        "Color is the characteristic",
        " of visual perception described",
        " through color categories.",
    ]
    assert merged_usage(whole) == Usage(input_tokens=9, output_tokens=14)
    assert Finish("stop", "") in whole
    for cut in range(1, len(AZURE_ASYNC_STREAM)):
        pieces = (AZURE_ASYNC_STREAM[:cut], AZURE_ASYNC_STREAM[cut:])
        assert parse_bytes("azure_openai", *pieces) == whole


@pytest.mark.parametrize("protocol", ["azure_openai", "openai_chat"])
def test_it_keeps_a_content_filter_stop_as_its_outcome(simulator: Any, protocol: str) -> None:
    m = measure(azure(simulator, "sim-fast+tokens=40+fault=content_filter", protocol))
    truth = simulator.truth(m.request_id)
    assert truth["finish_reason"] == "content_filter"
    assert m.ok and m.outcome == ErrorCategory.CONTENT_FILTERED
    assert m.finish_reason == "content_filter"
    # What streamed before the filter stopped it is kept and counted.
    assert m.output_tokens == truth["output_tokens"] < 40 and m.tokens_source == "usage"
    assert m.ttft_ms is not None and m.output_chars > 0


def test_it_reads_azures_filter_verdict_on_the_stop_chunk(simulator: Any) -> None:
    result = stream(azure(simulator, "sim-fast+tokens=10+fault=content_filter"))
    assert result.error is None and result.end_seen
    assert result.finish == Finish("content_filter", ErrorCategory.CONTENT_FILTERED)
    assert result.text  # the text before the stop


def test_it_counts_the_tokens_of_async_filter_chunks(simulator: Any) -> None:
    # ~400 tok/s at 4-8 tokens a chunk: a chunk every 10-20 ms, most in a read of their own.
    m = measure(azure(simulator, "sim-fast+tokens=60+tps=400+fault=async_filter"))
    truth = simulator.truth(m.request_id)
    text_events = [e for e in truth["events"] if e["kind"] == "text"]
    assert m.ok and m.outcome == "" and m.finish_reason == "stop"
    assert m.output_tokens == truth["output_tokens"] == 60 and m.tokens_source == "usage"
    # Annotation chunks carry no text: only the text chunks count, several tokens each.
    assert m.chunks == len(text_events)
    assert all(4 <= e["tokens"] <= 8 for e in text_events[:-1])
    # Tokens per network read that carried text: a chunk a read, unless a loaded machine read
    # late and found several waiting (coalesced_events of them shared a read with another).
    # An annotation chunk's read would add a read and lower the figure below 60 / chunks.
    shared = m.coalesced_events
    if shared == 0:
        assert m.tokens_per_chunk == pytest.approx(60 / m.chunks)
    else:
        most_reads, fewest_reads = m.chunks - shared / 2, m.chunks - shared + 1
        assert 60 / most_reads - 1e-9 <= m.tokens_per_chunk <= 60 / fewest_reads + 1e-9
    assert m.tokens_per_chunk >= 4
    assert m.decode_tps is not None and m.decode_tps > 0


def test_it_records_a_filter_verdict_after_the_stop_as_filtered() -> None:
    assert AZURE_ASYNC_LATE_FLAG != AZURE_ASYNC_STREAM
    shape = Shape("azure_openai", AZURE_ASYNC_LATE_FLAG)
    m, _ = measure_served(shape, base_path="")
    assert m.ok and m.outcome == ErrorCategory.CONTENT_FILTERED, (
        f"a late flag read as outcome {m.outcome!r}, finish {m.finish_reason!r}"
    )
    assert m.finish_reason == "content_filter"
    # What streamed before the verdict keeps its count and its timings.
    assert m.output_tokens == 14 and m.tokens_source == "usage" and m.decode_tps is not None
    clean, _ = measure_served(Shape("azure_openai", AZURE_ASYNC_STREAM), base_path="")
    assert clean.outcome == "" and clean.finish_reason == "stop"


def test_it_turns_down_a_filter_fault_that_a_protocol_does_not_speak(simulator: Any) -> None:
    config = EndpointConfig(
        base_url=simulator.base_url,
        protocol="gemini",
        model="sim-fast+fault=async_filter",
        api_key="k",
    )
    result = stream(config)
    assert result.status == 400
    assert result.error is not None and "azure_openai" in result.error.message
