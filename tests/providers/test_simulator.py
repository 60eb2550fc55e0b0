"""The reference simulator over real sockets: wire formats, usage, timing truth and faults.

Everything here talks HTTP to a `manage.py simulate` subprocess (the session `simulator` fixture)
and parses the bytes with a small WHATWG-style SSE reader of its own, so the simulator is checked
independently of the adapters it exists to test.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from django.core.management import CommandError, call_command

from providers.simulator.process import SimulatorHandle, start_simulator
from providers.simulator.profiles import PROFILES
from providers.simulator.textgen import CODE_PIECES
from providers.simulator.truth import TruthRecord, TruthStore

PROTOCOLS = ("openai_chat", "openai_responses", "anthropic_messages", "gemini")
PROMPT = "Write a Python rate limiter module."


@dataclass
class Event:
    event: str
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


def parse_sse(raw: bytes) -> tuple[list[Event], list[str]]:
    """Dispatched events and comment lines; an event without its blank line is dropped."""
    events: list[Event] = []
    comments: list[str] = []
    name, data = "", []
    for line in re.split(r"\r\n|\r|\n", raw.decode())[:-1]:  # text after the last EOL: cut
        if not line:
            if data:
                events.append(Event(name or "message", "\n".join(data)))
            name, data = "", []
        elif line.startswith(":"):
            comments.append(line[1:].strip())
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                data.append(value)
            elif field == "event":
                name = value
    return events, comments


def build(
    protocol: str,
    sim: SimulatorHandle,
    model: str,
    *,
    max_tokens: int | None = 256,
    prompt: str = PROMPT,
) -> tuple[str, dict[str, Any], dict[str, str]]:
    """URL, JSON body and headers of a streaming request in `protocol`."""
    if protocol == "openai_chat":
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if max_tokens:
            body["max_completion_tokens"] = max_tokens
        return sim.openai_base + "/chat/completions", body, {}
    if protocol == "openai_responses":
        body = {"model": model, "input": prompt, "stream": True}
        if max_tokens:
            body["max_output_tokens"] = max_tokens
        return sim.openai_base + "/responses", body, {}
    if protocol == "anthropic_messages":
        body = {
            "model": model,
            "max_tokens": max_tokens or 4096,
            "messages": [{"role": "user", "content": prompt}],
            "stream": True,
        }
        return sim.base_url + "/v1/messages", body, {"anthropic-version": "2023-06-01"}
    body = {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}
    if max_tokens:
        body["generationConfig"] = {"maxOutputTokens": max_tokens}
    url = f"{sim.base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse"
    return url, body, {}


def post(protocol: str, sim: SimulatorHandle, model: str, **kwargs: Any) -> httpx.Response:
    url, body, headers = build(protocol, sim, model, **kwargs)
    return httpx.post(url, json=body, headers=headers, timeout=10)


def text_and_usage(protocol: str, events: list[Event]) -> tuple[str, str, int | None]:
    """(answer text, reasoning text, reported output tokens) as each protocol's client reads it."""
    answer, reasoning, tokens = [], [], None
    for ev in events:
        if ev.data == "[DONE]":
            continue
        obj = ev.json()
        if protocol == "openai_chat":
            for choice in obj["choices"]:
                answer.append(choice["delta"].get("content") or "")
                reasoning.append(choice["delta"].get("reasoning_content") or "")
            if obj.get("usage"):
                tokens = obj["usage"]["completion_tokens"]
        elif protocol == "openai_responses":
            if ev.event == "response.output_text.delta":
                answer.append(obj["delta"])
            elif ev.event == "response.reasoning_summary_text.delta":
                reasoning.append(obj["delta"])
            elif ev.event in ("response.completed", "response.incomplete"):
                usage = obj["response"]["usage"]
                tokens = usage["output_tokens"] if usage else None
        elif protocol == "anthropic_messages":
            delta = obj.get("delta", {})
            answer.append(delta.get("text", "") if delta.get("type") == "text_delta" else "")
            reasoning.append(delta.get("thinking", ""))
            if ev.event == "message_delta" and "usage" in obj:
                tokens = obj["usage"]["output_tokens"]
        else:
            for part in obj["candidates"][0]["content"]["parts"]:
                (reasoning if part.get("thought") else answer).append(part["text"])
            meta = obj.get("usageMetadata")
            if meta and "candidatesTokenCount" in meta:
                tokens = meta["candidatesTokenCount"] + meta.get("thoughtsTokenCount", 0)
    return "".join(answer), "".join(reasoning), tokens


# --- the wire format of each protocol ------------------------------------------------------


def test_it_streams_openai_chat_chunks_usage_and_done(simulator: SimulatorHandle) -> None:
    response = post("openai_chat", simulator, "sim-fast+tokens=25")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-tokspeed-simulated"] == "true"
    assert b"\r" not in response.content and response.content.endswith(b"data: [DONE]\n\n")
    events, _ = parse_sse(response.content)
    assert all(ev.event == "message" for ev in events)  # data-only events
    chunks = [ev.json() for ev in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    content = [c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] == 25
    assert len(content) == 25  # one token per chunk on sim-fast
    truth = simulator.truth(response.headers["x-sim-request-id"])
    assert truth["output_tokens"] == 25 and truth["protocol"] == "openai_chat"
    assert usage_chunk["usage"]["prompt_tokens"] == truth["prompt_tokens"] == -(-len(PROMPT) // 4)
    expected = json.loads(b'"' + b"".join(CODE_PIECES[:25]) + b'"')  # the module, from its top
    assert "".join(c["choices"][0]["delta"]["content"] for c in content) == expected


def test_it_streams_responses_events_named_like_their_type(simulator: SimulatorHandle) -> None:
    response = post("openai_responses", simulator, "sim-fast+tokens=20")
    events, _ = parse_sse(response.content)
    payloads = [ev.json() for ev in events]
    assert all(ev.event == p["type"] for ev, p in zip(events, payloads, strict=True))
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert events[0].event == "response.created" and events[-1].event == "response.completed"
    answer, _, tokens = text_and_usage("openai_responses", events)
    done = next(p for p in payloads if p["type"] == "response.output_text.done")
    assert done["text"] == answer and tokens == 20
    assert sum(ev.event == "response.output_text.delta" for ev in events) == 20


def test_it_streams_anthropic_message_events_in_order(simulator: SimulatorHandle) -> None:
    response = post("anthropic_messages", simulator, "sim-fast+tokens=15")
    events, _ = parse_sse(response.content)
    names = [ev.event for ev in events]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert names.count("content_block_delta") == 15
    assert all(ev.json()["type"] == ev.event for ev in events)
    final = events[-2].json()
    assert final["delta"]["stop_reason"] == "end_turn" and final["usage"]["output_tokens"] == 15
    assert events[0].json()["message"]["usage"]["output_tokens"] == 1  # the placeholder


def test_it_frames_gemini_events_with_crlf_and_no_sentinel(simulator: SimulatorHandle) -> None:
    response = post("gemini", simulator, "sim-fast+tokens=12")
    raw = response.content
    assert raw.endswith(b"\r\n\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    events, _ = parse_sse(raw)
    last = events[-1].json()
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert all("finishReason" not in ev.json()["candidates"][0] for ev in events[:-1])
    _, _, tokens = text_and_usage("gemini", events)
    assert tokens == 12 and b"[DONE]" not in raw


@pytest.mark.parametrize(
    ("protocol", "marker"),
    [
        ("openai_chat", '"finish_reason":"length"'),
        ("openai_responses", '"reason":"max_output_tokens"'),
        ("anthropic_messages", '"stop_reason":"max_tokens"'),
        ("gemini", '"finishReason": "MAX_TOKENS"'),
    ],
)
def test_it_cuts_the_reply_at_the_requests_max_tokens(
    simulator: SimulatorHandle, protocol: str, marker: str
) -> None:
    response = post(protocol, simulator, "sim-fast+tokens=40", max_tokens=9)
    events, _ = parse_sse(response.content)
    _, _, tokens = text_and_usage(protocol, events)
    assert tokens == 9 and marker in response.text
    assert simulator.truth(response.headers["x-sim-request-id"])["finish_reason"] == "length"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_streams_reasoning_before_the_answer_and_counts_it(
    simulator: SimulatorHandle, protocol: str
) -> None:
    response = post(protocol, simulator, "sim-reasoning+tokens=30+ttft=5+tps=3000")
    events, _ = parse_sse(response.content)
    answer, reasoning, tokens = text_and_usage(protocol, events)
    truth = simulator.truth(response.headers["x-sim-request-id"])
    assert reasoning and answer and tokens == truth["output_tokens"] == 30
    assert 0 < truth["reasoning_tokens"] < 30
    kinds = [e["kind"] for e in truth["events"] if e["tokens"]]
    first_text = kinds.index("text")
    assert set(kinds[:first_text]) == {"reasoning"} and set(kinds[first_text:]) == {"text"}


def test_it_carries_several_tokens_per_event_on_the_bursty_profile(
    simulator: SimulatorHandle,
) -> None:
    response = post("openai_chat", simulator, "sim-bursty+tokens=60+ttft=5+tps=5000")
    events, _ = parse_sse(response.content)
    _, _, tokens = text_and_usage("openai_chat", events)
    sizes = [e["tokens"] for e in simulator.truth(response.headers["x-sim-request-id"])["events"]]
    low, high = PROFILES["sim-bursty"].tokens_per_event
    assert tokens == sum(sizes) == 60
    assert max(sizes) > 1 and all(0 <= n <= high for n in sizes)


# --- timing truth --------------------------------------------------------------------------


async def _stream_times(url: str, body: dict[str, Any], headers: dict[str, str]) -> dict:
    """Client-side perf_counter_ns of each received chunk carrying generated text."""
    async with httpx.AsyncClient(timeout=20) as client:
        async with client.stream("POST", url, json=body, headers=headers) as response:
            times: list[int] = []
            async for chunk in response.aiter_raw():
                now = time.perf_counter_ns()
                # Non-empty content only (the role chunk has "content":""); reads may coalesce.
                times += [now] * len(re.findall(rb'"content":"[^"]', chunk))
            return {"id": response.headers["x-sim-request-id"], "times": times}


def test_it_records_truth_just_before_the_client_receives_it(simulator: SimulatorHandle) -> None:
    url, body, headers = build("openai_chat", simulator, "sim-fast+tokens=30+tps=300")
    seen = asyncio.run(_stream_times(url, body, headers))
    truth = simulator.truth(seen["id"])
    assert truth["received_ns"] <= truth["headers_ns"] <= truth["first_token_ns"]
    assert truth["first_token_ns"] <= truth["last_token_ns"] <= truth["end_ns"]
    sends = [e["t_ns"] for e in truth["events"] if e["tokens"]]
    assert len(sends) == len(seen["times"]) == 30
    # perf_counter_ns is CLOCK_MONOTONIC in both processes: each arrival follows its send.
    delays_ms = [(got - sent) / 1e6 for got, sent in zip(seen["times"], sends, strict=True)]
    assert min(delays_ms) >= 0 and sorted(delays_ms)[15] < 50


def _ttft_ms(truth: dict) -> float:
    return (truth["first_token_ns"] - truth["received_ns"]) / 1e6


def test_it_delays_the_first_token_by_the_profiles_ttft(simulator: SimulatorHandle) -> None:
    profile = PROFILES["sim-gpu"]
    response = post("openai_chat", simulator, "sim-gpu+tokens=3+tps=1000", max_tokens=None)
    truth = simulator.truth(response.headers["x-sim-request-id"])
    expected = profile.ttft_ms + truth["prompt_tokens"] / profile.prefill_tps * 1000
    spread = 3 * profile.ttft_jitter * expected  # jitter is clipped at three sigma
    assert expected - spread - 2 <= _ttft_ms(truth) <= expected + spread + 100


def test_it_takes_longer_to_the_first_token_for_a_longer_prompt(
    simulator: SimulatorHandle,
) -> None:
    profile = PROFILES["sim-fast"]
    model = "sim-fast+tokens=2+ttft=10"
    short = simulator.truth(post("gemini", simulator, model).headers["x-sim-request-id"])
    long_prompt = "All work and no play. " * 1800  # ~10k tokens
    response = post("gemini", simulator, model, prompt=long_prompt)
    long = simulator.truth(response.headers["x-sim-request-id"])
    extra_ms = (long["prompt_tokens"] - short["prompt_tokens"]) / profile.prefill_tps * 1000
    assert long["prompt_tokens"] == -(-len(long_prompt) // 4)
    assert extra_ms > 50
    assert extra_ms * 0.7 < _ttft_ms(long) - _ttft_ms(short) < extra_ms * 1.3 + 30


async def _burst(sim: SimulatorHandle, model: str, n: int) -> list[dict]:
    url, body, headers = build("openai_chat", sim, model)
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=n)) as client:

        async def one() -> str:
            response = await client.post(url, json=body, headers=headers)
            return response.headers["x-sim-request-id"]

        ids = await asyncio.gather(*(one() for _ in range(n)))
    return [sim.truth(rid) for rid in ids]


def _decode_tps(truth: dict) -> float:
    return (truth["output_tokens"] - 1) / ((truth["last_token_ns"] - truth["first_token_ns"]) / 1e9)


def test_it_slows_each_user_down_when_many_streams_run_at_once(
    simulator: SimulatorHandle,
) -> None:
    model = "sim-fast+tokens=150+tps=400+ttft=5"
    alone = _decode_tps(asyncio.run(_burst(simulator, model, 1))[0])
    crowd = sorted(_decode_tps(t) for t in asyncio.run(_burst(simulator, model, 16)))
    batching = 1 + 15 / PROFILES["sim-fast"].batch_knee  # the profile's slowdown at 16 streams
    assert alone == pytest.approx(400, rel=0.25)
    assert crowd[8] < alone / (batching * 0.6)


def test_it_applies_runtime_speed_and_ttft_factors(sim_control: SimulatorHandle) -> None:
    model = "sim-fast+tokens=60+tps=500+ttft=60"
    before = sim_control.truth(
        post("anthropic_messages", sim_control, model).headers["x-sim-request-id"]
    )
    assert sim_control.control(speed_factor=0.5, ttft_factor=2.0) == {
        "speed_factor": 0.5,
        "ttft_factor": 2.0,
    }
    after = sim_control.truth(
        post("anthropic_messages", sim_control, model).headers["x-sim-request-id"]
    )
    assert _ttft_ms(after) > _ttft_ms(before) * 1.6
    assert _decode_tps(after) < _decode_tps(before) * 0.65
    bad = httpx.post(sim_control.base_url + "/_sim/control", json={"speed_factor": -1})
    assert bad.status_code == 400 and "speed_factor" in bad.json()["error"]
    assert sim_control.control()["speed_factor"] == 0.5  # unchanged by the refused request


# --- faults ---------------------------------------------------------------------------------

ERROR_SHAPES = {
    # fault: {protocol: (status, path into the body, value)}
    "429": {
        "openai_chat": (429, ("error", "code"), "rate_limit_exceeded"),
        "openai_responses": (429, ("error", "code"), "rate_limit_exceeded"),
        "anthropic_messages": (429, ("error", "type"), "rate_limit_error"),
        "gemini": (429, ("error", "status"), "RESOURCE_EXHAUSTED"),
    },
    "500": {
        "openai_chat": (500, ("error", "type"), "server_error"),
        "openai_responses": (500, ("error", "type"), "server_error"),
        "anthropic_messages": (500, ("error", "type"), "api_error"),
        "gemini": (500, ("error", "status"), "INTERNAL"),
    },
    "529": {
        "openai_chat": (503, ("error", "code"), "server_is_overloaded"),
        "openai_responses": (503, ("error", "code"), "server_is_overloaded"),
        "anthropic_messages": (529, ("error", "type"), "overloaded_error"),
        "gemini": (503, ("error", "status"), "UNAVAILABLE"),
    },
    "401": {
        "openai_chat": (401, ("error", "code"), "invalid_api_key"),
        "openai_responses": (401, ("error", "code"), "invalid_api_key"),
        "anthropic_messages": (401, ("error", "type"), "authentication_error"),
        "gemini": (400, ("error", "details", 0, "reason"), "API_KEY_INVALID"),
    },
}


def dig(obj: Any, path: tuple) -> Any:
    for key in path:
        obj = obj[key]
    return obj


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("fault", sorted(ERROR_SHAPES))
def test_it_answers_http_error_faults_in_each_protocols_shape(
    simulator: SimulatorHandle, protocol: str, fault: str
) -> None:
    status, path, value = ERROR_SHAPES[fault][protocol]
    response = post(protocol, simulator, f"sim-fast+fault={fault}+retry_after=3")
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    assert dig(response.json(), path) == value
    assert response.headers["x-tokspeed-simulated"] == "true"
    if fault == "429":
        assert response.headers["retry-after"] == "3"
    truth = simulator.truth(response.headers["x-sim-request-id"])
    assert truth["status"] == status and truth["output_tokens"] == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_sends_an_error_event_after_half_the_reply(
    simulator: SimulatorHandle, protocol: str
) -> None:
    response = post(protocol, simulator, "sim-fast+tokens=20+fault=error_event")
    assert response.status_code == 200
    events, _ = parse_sse(response.content)
    last = events[-1]
    body = last.json()
    assert "error" in body or last.event == "error"
    if protocol in ("anthropic_messages", "openai_responses"):
        assert last.event == "error" and body["type"] == "error"
    assert "[DONE]" not in response.text and "message_stop" not in response.text
    assert "response.completed" not in response.text and "finishReason" not in response.text
    assert simulator.truth(response.headers["x-sim-request-id"])["output_tokens"] == 10
    url, body, headers = build(protocol, simulator, "sim-fast+tokens=20+fault=error_event")
    assert raw_until_close(url, body, headers).endswith(b"\r\n0\r\n\r\n")


def raw_until_close(url: str, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    """Bytes of a keep-alive HTTP/1.1 exchange until the server closes (or a timeout)."""
    parts = httpx.URL(url)
    payload = json.dumps(body).encode()
    head = f"POST {parts.raw_path.decode()} HTTP/1.1\r\nHost: {parts.host}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    received = b""
    with socket.create_connection((parts.host, parts.port), timeout=5) as sock:
        sock.sendall(head.encode() + payload)
        while chunk := sock.recv(65536):
            received += chunk
    return received


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_drops_the_connection_in_the_middle_of_the_body(
    simulator: SimulatorHandle, protocol: str
) -> None:
    url, body, headers = build(protocol, simulator, "sim-fast+tokens=20+fault=drop")
    received = b""
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", url, json=body, headers=headers) as response:
            with pytest.raises(httpx.RemoteProtocolError):
                for chunk in response.iter_raw():
                    received += chunk
            rid = response.headers["x-sim-request-id"]
    truth = simulator.truth(rid)
    assert truth["outcome"] == "drop" and truth["output_tokens"] == 10
    events, _ = parse_sse(received)
    assert text_and_usage(protocol, events)[0]  # the first half arrived


def test_it_stalls_mid_stream_then_resumes(simulator: SimulatorHandle) -> None:
    model = "sim-fast+tokens=10+fault=stall+stall_s=0.5"
    url, body, headers = build("openai_chat", simulator, model)
    with httpx.Client(timeout=httpx.Timeout(10, read=0.2)) as client:
        with client.stream("POST", url, json=body, headers=headers) as response:
            with pytest.raises(httpx.ReadTimeout):
                for _ in response.iter_raw():
                    pass
    response = post("openai_chat", simulator, model)
    truth = simulator.truth(response.headers["x-sim-request-id"])
    sends = [e["t_ns"] for e in truth["events"] if e["tokens"]]
    gaps_s = [(b - a) / 1e9 for a, b in zip(sends, sends[1:], strict=False)]
    assert max(gaps_s) >= 0.5 and gaps_s.index(max(gaps_s)) == 4  # after 5 of 10 tokens
    assert response.text.endswith("data: [DONE]\n\n") and truth["output_tokens"] == 10


def test_it_stops_streaming_when_the_client_goes_away(simulator: SimulatorHandle) -> None:
    url, body, headers = build("openai_chat", simulator, "sim-fast+tokens=2000+tps=200+ttft=1")
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", url, json=body, headers=headers) as response:
            rid = response.headers["x-sim-request-id"]
            next(response.iter_raw())
    deadline = time.monotonic() + 5
    while (truth := simulator.truth(rid))["outcome"] == "in_progress":
        assert time.monotonic() < deadline, "the simulator kept streaming to a closed socket"
        time.sleep(0.05)
    assert truth["outcome"] == "client_closed" and truth["output_tokens"] < 2000
    time.sleep(0.1)
    assert simulator.truth(rid)["output_tokens"] == truth["output_tokens"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_sends_one_malformed_data_event_mid_stream(
    simulator: SimulatorHandle, protocol: str
) -> None:
    response = post(protocol, simulator, "sim-fast+tokens=10+fault=malformed")
    events, _ = parse_sse(response.content)
    broken = []
    for ev in events:
        try:
            ev.json()
        except ValueError:
            broken.append(ev.data)
    assert len([data for data in broken if data != "[DONE]"]) == 1
    kinds = [e["kind"] for e in simulator.truth(response.headers["x-sim-request-id"])["events"]]
    assert kinds.count("malformed") == 1 and kinds[-1] == "end"


def test_it_answers_not_sse_with_an_html_page(simulator: SimulatorHandle) -> None:
    response = post("openai_chat", simulator, "sim-fast", max_tokens=5)
    assert response.status_code == 200
    url, body, headers = build("openai_chat", simulator, "sim-fast")
    page = httpx.post(url, json=body, headers={**headers, "x-sim-fault": "not_sse"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<html>" in page.text and "data:" not in page.text


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_mixes_comments_and_crlf_into_a_valid_stream(
    simulator: SimulatorHandle, protocol: str
) -> None:
    response = post(protocol, simulator, "sim-fast+tokens=30+ttft=150+fault=comments")
    raw = response.content
    assert b"\n" not in raw.replace(b"\r\n", b"")  # CRLF framing throughout
    events, comments = parse_sse(raw)
    assert "keep-alive" in comments and len(comments) >= 4  # during the wait and mid-stream
    _, _, tokens = text_and_usage(protocol, events)
    assert tokens == 30


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_it_omits_usage_when_asked(simulator: SimulatorHandle, protocol: str) -> None:
    response = post(protocol, simulator, "sim-fast+tokens=8+fault=no_usage")
    events, _ = parse_sse(response.content)
    answer, _, tokens = text_and_usage(protocol, events)
    assert answer and tokens is None
    assert "completion_tokens" not in response.text and "usageMetadata" not in response.text
    assert '"output_tokens"' not in response.text


def test_it_requires_the_configured_api_key_in_each_protocols_header() -> None:
    key = "sim-secret-key-123"  # noqa: S105 - a test key for a local simulator
    with start_simulator(api_key=key) as sim:
        missing = post("openai_chat", sim, "sim-fast+tokens=2")
        assert missing.status_code == 401
        url, body, headers = build("anthropic_messages", sim, "sim-fast+tokens=2")
        wrong = httpx.post(url, json=body, headers={**headers, "x-api-key": "nope"})
        assert wrong.status_code == 401 and wrong.json()["error"]["type"] == "authentication_error"
        url, body, headers = build("gemini", sim, "sim-fast+tokens=2")
        assert httpx.post(url, json=body, headers={"x-goog-api-key": "nope"}).status_code == 400
        assert httpx.post(url, json=body).status_code == 403
        ok = httpx.post(url, json=body, headers={"x-goog-api-key": key})
        assert ok.status_code == 200
        url, body, headers = build("openai_chat", sim, "sim-fast+tokens=2")
        good = httpx.post(url, json=body, headers={"authorization": f"Bearer {key}"})
        assert good.status_code == 200 and good.text.endswith("[DONE]\n\n")
        assert key not in missing.text + wrong.text


# --- request validation, model names, side routes --------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "change", "status"),
    [
        ("openai_chat", {"model": None}, 400),
        ("openai_chat", {"messages": []}, 400),
        ("openai_chat", {"stream": False}, 400),
        ("openai_chat", {"max_completion_tokens": 0}, 400),
        ("openai_responses", {"input": None}, 400),
        ("anthropic_messages", {"max_tokens": None}, 400),
        ("anthropic_messages", {"messages": [{"role": "robot", "content": "x"}]}, 400),
        ("gemini", {"contents": []}, 400),
        ("openai_chat", {"model": "gpt-imaginary"}, 404),
        ("anthropic_messages", {"model": "sim-fast+fault=nonsense"}, 400),
        ("gemini", {"model": "sim-fast+tokens=zero"}, 400),
    ],
)
def test_it_rejects_nonsense_requests_with_the_protocols_error_body(
    simulator: SimulatorHandle, protocol: str, change: dict[str, Any], status: int
) -> None:
    model = change.get("model") or "sim-fast"
    url, body, headers = build(protocol, simulator, model)
    body.update({k: v for k, v in change.items() if k != "model" or protocol != "gemini"})
    body = {k: v for k, v in body.items() if v is not None}
    response = httpx.post(url, json=body, headers=headers)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["message"]
    if protocol == "anthropic_messages":
        assert response.json()["type"] == "error"
    truth = simulator.truth(response.headers["x-sim-request-id"])
    assert truth["outcome"] == "http_error"


def test_it_rejects_requests_missing_protocol_essentials(simulator: SimulatorHandle) -> None:
    url, body, _ = build("anthropic_messages", simulator, "sim-fast")
    no_version = httpx.post(url, json=body)
    assert no_version.status_code == 400 and "anthropic-version" in no_version.text
    url, body, _ = build("gemini", simulator, "sim-fast")
    assert httpx.post(url.replace("?alt=sse", ""), json=body).status_code == 400
    url, _, _ = build("openai_chat", simulator, "sim-fast")
    not_json = httpx.post(url, content=b"{nope")
    assert not_json.status_code == 400 and "JSON" in not_json.json()["error"]["message"]


def test_it_labels_its_model_list_and_truth_routes_simulated(simulator: SimulatorHandle) -> None:
    models = httpx.get(simulator.openai_base + "/models")
    assert {m["id"] for m in models.json()["data"]} == set(PROFILES)
    assert all("simulated" in m["owned_by"] for m in models.json()["data"])
    assert models.headers["x-tokspeed-simulated"] == "true"
    gemini = httpx.get(simulator.base_url + "/v1beta/models").json()["models"]
    assert all("(simulated)" in m["displayName"] for m in gemini)
    missing = httpx.get(simulator.base_url + "/_sim/requests/does-not-exist")
    assert missing.status_code == 404
    with pytest.raises(KeyError):
        simulator.truth("does-not-exist")


def test_it_keeps_only_the_most_recent_truth_records() -> None:
    store = TruthStore(keep=3)
    for index in range(5):
        store.add(TruthRecord(f"r{index}", "openai_chat", index))
    assert len(store) == 3
    assert store.get("r0") is None and store.get("r1") is None
    assert store.get("r4") is not None and store.get("r4").as_dict()["simulated"] is True


def test_it_refuses_a_port_out_of_range() -> None:
    with pytest.raises(CommandError, match="--port must be between 0 and 65535"):
        call_command("simulate", port=70000)


def test_it_gives_each_simulated_endpoint_its_own_load() -> None:
    # Endpoint A streams one reply at a time, alone and then while endpoint B has 8 streams in
    # flight; one load shared by the server would slow A by a fifth (1 + 8/32). The simulator's
    # own pacing (the rate it schedules A's token gaps at) must be the same, exactly; A's decode
    # as sent, which a busy machine's scheduling moves either way (CI runs read +1.1 % and, with
    # the three streams alone slowed, +10 %), no more than a tenth slower beside B: a shared load
    # would read a fifth slower.
    b_tps = 15
    a, b = "sim-gpu+tokens=400+tps=400+ttft=20", f"sim-wafer+tokens=1000+tps={b_tps}+ttft=20"

    async def one_at_a_time(sim: SimulatorHandle) -> list[dict]:
        return [(await _burst(sim, a, 1))[0] for _ in range(3)]

    async def beside_b(sim: SimulatorHandle) -> tuple[list[dict], list[dict]]:
        crowd = asyncio.create_task(_burst(sim, b, 8))
        await asyncio.sleep(1.0)  # B's streams are decoding (20 s of tokens each)
        mine = await one_at_a_time(sim)
        return mine, await crowd

    def median_decode(truths: list[dict]) -> float:
        return sorted(_decode_tps(t) for t in truths)[len(truths) // 2]

    def paced(truths: list[dict]) -> set[tuple[float, float]]:
        return {(t["paced_min_tps"], t["paced_max_tps"]) for t in truths}

    with start_simulator() as sim:  # its own process: no other test's streams load it
        first = asyncio.run(one_at_a_time(sim))
        mine, crowd = asyncio.run(beside_b(sim))
    spans = [(t["first_token_ns"], t["last_token_ns"]) for t in crowd]
    mine_spans = [(t["first_token_ns"], t["last_token_ns"]) for t in mine]
    covered = max(f for f, _ in spans) < min(f for f, _ in mine_spans) and min(
        last for _, last in spans
    ) > max(last for _, last in mine_spans)
    assert covered, f"B's streams {spans} did not cover A's {mine_spans}"
    # B's streams slowed each other (its load counter is live) but not A: A was paced alike.
    assert all(t["paced_min_tps"] < b_tps for t in crowd), paced(crowd)
    [(low, high)] = paced(first)  # one stream at a time: one rate throughout
    assert low == high and paced(mine) == {(low, high)}, (paced(mine), low, high)
    alone, beside = median_decode(first), median_decode(mine)
    assert beside > 0.9 * alone, (
        f"A decodes at {beside:.1f} tok/s beside B's 8 streams, {alone:.1f} alone: B's load "
        "slowed A"
    )
