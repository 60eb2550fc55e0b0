"""The contract every protocol adapter meets: one class, inherited by each adapter's tests.

Same shape as Django's contrib.sessions backend tests: `AdapterContract` holds the tests, each
`tests/test_adapter_<protocol>.py` subclasses it with its protocol's transcript and expectations
and adds its own quirk tests. The `*_from_the_simulator` tests stream over real loopback sockets
through httpx, the SSE decoder and the adapter, against the reference simulator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from providers.base import (
    Delta,
    End,
    EndpointConfig,
    ErrorCategory,
    Finish,
    Item,
    SSEEvent,
    StreamError,
    Usage,
)
from providers.errors import missing_end_marker, not_event_stream, transport_error
from providers.registry import get_adapter, stream_format
from providers.wire import authorized

SECRET = "sk-test-0123456789abcdefSECRET"  # noqa: S105 - a fake key that must never leak
TRANSCRIPTS = Path(__file__).parent / "transcripts"


def transcript(name: str) -> bytes:
    """Bytes on the wire of a PROTOCOLS.md reference stream (tests/transcripts/NAME.sse)."""
    return (TRANSCRIPTS / f"{name}.sse").read_bytes()


def merged_usage(items: list[Item]) -> Usage | None:
    """Usage items folded the way the measurement does: later values win, field by field."""
    usage: Usage | None = None
    for item in items:
        if isinstance(item, Usage):
            if usage is None:
                usage = item
            else:
                usage = Usage(
                    *(
                        new if new is not None else old
                        for new, old in zip(
                            (
                                item.input_tokens,
                                item.output_tokens,
                                item.reasoning_tokens,
                                item.cached_tokens,
                            ),
                            (
                                usage.input_tokens,
                                usage.output_tokens,
                                usage.reasoning_tokens,
                                usage.cached_tokens,
                            ),
                            strict=True,
                        )
                    )
                )
    return usage


@dataclass
class Streamed:
    """What one request gave: its items and how it ended."""

    status: int
    headers: dict[str, str]
    items: list[Item] = field(default_factory=list)
    error: StreamError | None = None
    end_seen: bool = False

    @property
    def text(self) -> str:
        return "".join(i.text for i in self.items if isinstance(i, Delta) and not i.reasoning)

    @property
    def reasoning(self) -> str:
        return "".join(i.text for i in self.items if isinstance(i, Delta) and i.reasoning)

    @property
    def usage(self) -> Usage | None:
        return merged_usage(self.items)

    @property
    def finish(self) -> Finish | None:
        finishes = [i for i in self.items if isinstance(i, Finish)]
        return finishes[-1] if finishes else None


def parse_bytes(protocol: str, *reads: bytes) -> list[Item]:
    adapter = get_adapter(protocol)
    decoder = stream_format(adapter)[1]()
    items: list[Item] = []
    for read in reads:
        for event in decoder.feed(read):
            items += adapter.parse(event)
    for event in decoder.close():
        items += adapter.parse(event)
    return items


def stream(
    config: EndpointConfig,
    *,
    prompt: str = "Say hello.",
    max_tokens: int = 64,
    read_timeout_s: float = 10.0,
) -> Streamed:
    """One streamed request over a real socket: httpx -> the protocol's decoder -> parse."""
    adapter = get_adapter(config.protocol)
    spec = authorized(adapter.build_request(config, prompt=prompt, max_tokens=max_tokens), config)
    media_type, new_decoder = stream_format(adapter)
    body: dict[str, Any] = (
        {"content": spec.content} if spec.content is not None else {"json": spec.json}
    )
    timeout = httpx.Timeout(connect=5.0, read=read_timeout_s, write=5.0, pool=5.0)
    got_text = False
    with httpx.Client(timeout=timeout) as client:
        try:
            with client.stream(spec.method, spec.url, headers=spec.headers, **body) as r:
                result = Streamed(r.status_code, dict(r.headers))
                if r.status_code >= 400:
                    if r.status_code == 401 and config.credential is not None:
                        config.credential.invalidate()
                    result.error = adapter.classify_http_error(r.status_code, r.headers, r.read())
                    return result
                content_type = r.headers.get("content-type", "")
                if media_type not in content_type:
                    result.error = not_event_stream(content_type, r.read())
                    return result
                decoder = new_decoder()
                for read in r.iter_raw():
                    for event in decoder.feed(read):
                        for item in adapter.parse(event):
                            result.items.append(item)
                            got_text = got_text or isinstance(item, Delta)
                            if isinstance(item, StreamError):
                                result.error = item
                                return result
                            if isinstance(item, End):
                                result.end_seen = True
                                return result
                decoder.close()
        except httpx.TransportError as exc:
            result.error = transport_error(exc, after_first_token=got_text)
            return result
    if not (adapter.ends_on_close and result.finish):
        result.error = missing_end_marker(config.protocol, 0)
    return result


def find_key(obj: Any, key: str) -> Any:
    """The value of `key` anywhere in a nested request body (None when absent)."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for value in obj.values():
            found = find_key(value, key)
            if found is not None:
                return found
    return None


class AdapterContract:
    """Subclasses set these, then inherit every test below."""

    protocol: ClassVar[str]
    TRANSCRIPT: ClassVar[bytes]  # the PROTOCOLS.md reference stream, as bytes on the wire
    expected_text: ClassVar[str]
    expected_reasoning: ClassVar[str] = ""
    expected_usage: ClassVar[Usage]
    key_header: ClassVar[str]  # the header that carries the API key
    default_max_field: ClassVar[str]
    rate_limit_body: ClassVar[dict[str, Any]]  # the protocol's 429 body
    sim_on_openai_base: ClassVar[bool] = False  # base URL is simulator + "/v1"

    def config(self, **changes: Any) -> EndpointConfig:
        base = EndpointConfig(
            base_url="https://api.example.test/v1",
            protocol=self.protocol,
            model="m-1",
            api_key=SECRET,
        )
        return replace(base, **changes)

    # --- offline contract ---------------------------------------------------------------

    def test_it_is_registered_under_its_protocol(self) -> None:
        adapter = get_adapter(self.protocol)
        assert adapter.name == self.protocol
        assert adapter.ends_on_close is (self.protocol in {"gemini", "vertex_gemini"})

    def test_it_parses_its_reference_transcript(self) -> None:
        items = parse_bytes(self.protocol, self.TRANSCRIPT)
        texts = [i for i in items if isinstance(i, Delta)]
        assert "".join(t.text for t in texts if not t.reasoning) == self.expected_text
        assert "".join(t.text for t in texts if t.reasoning) == self.expected_reasoning
        assert merged_usage(items) == self.expected_usage
        finishes = [i for i in items if isinstance(i, Finish)]
        assert len(finishes) == 1 and finishes[0].outcome == ""
        ends = [i for i in items if isinstance(i, End)]
        assert len(ends) == (0 if get_adapter(self.protocol).ends_on_close else 1)
        assert not any(isinstance(i, StreamError) for i in items)

    def test_it_parses_the_same_items_however_the_bytes_are_split(self) -> None:
        whole = parse_bytes(self.protocol, self.TRANSCRIPT)
        data = self.TRANSCRIPT
        for cut in range(1, len(data), 7):
            assert parse_bytes(self.protocol, data[:cut], data[cut:]) == whole

    def test_it_builds_a_streaming_request_with_the_key_only_in_its_header(self) -> None:
        spec = get_adapter(self.protocol).build_request(self.config(), prompt="Hi", max_tokens=77)
        assert spec.method == "POST"
        assert spec.url.startswith("https://api.example.test/")
        assert SECRET in spec.headers[self.key_header]
        assert SECRET not in spec.url and SECRET not in json.dumps(spec.json)
        assert spec.headers["content-type"] == "application/json"
        assert find_key(spec.json, self.default_max_field) == 77
        assert "Hi" in json.dumps(spec.json)

    def test_it_sends_no_auth_header_without_a_key(self) -> None:
        spec = get_adapter(self.protocol).build_request(
            self.config(api_key=None), prompt="Hi", max_tokens=5
        )
        assert self.key_header not in spec.headers

    def test_it_uses_the_endpoints_max_tokens_field_override(self) -> None:
        config = self.config(max_tokens_field="n_predict")
        spec = get_adapter(self.protocol).build_request(config, prompt="Hi", max_tokens=33)
        assert find_key(spec.json, "n_predict") == 33
        assert find_key(spec.json, self.default_max_field) is None

    def test_it_merges_extra_body_and_extra_headers(self) -> None:
        config = self.config(extra_body={"seed": 7}, extra_headers={"x-team": "perf"})
        spec = get_adapter(self.protocol).build_request(config, prompt="Hi", max_tokens=5)
        assert spec.json["seed"] == 7
        assert spec.headers["x-team"] == "perf"

    def test_it_skips_keepalive_data_events(self) -> None:
        adapter = get_adapter(self.protocol)
        assert adapter.parse(SSEEvent("message", "")) == []
        assert adapter.parse(SSEEvent("message", ": keep-alive")) == []

    def test_it_reports_malformed_json_as_stream_broken(self) -> None:
        items = get_adapter(self.protocol).parse(SSEEvent("message", '{"choices": [{"delta"'))
        assert len(items) == 1 and isinstance(items[0], StreamError)
        assert items[0].category == ErrorCategory.STREAM_BROKEN

    def test_it_classifies_a_rate_limit_and_keeps_retry_after(self) -> None:
        error = get_adapter(self.protocol).classify_http_error(
            429, {"Retry-After": "7"}, json.dumps(self.rate_limit_body).encode()
        )
        assert error.category == ErrorCategory.RATE_LIMITED
        assert error.retry_after_s == 7.0
        assert error.http_status == 429

    def test_it_classifies_non_json_error_bodies_by_status(self) -> None:
        adapter = get_adapter(self.protocol)
        html = b"<html><body>502 Bad Gateway</body></html>"
        assert adapter.classify_http_error(502, {}, html).category == ErrorCategory.SERVER_ERROR
        assert adapter.classify_http_error(503, {}, b"").category == ErrorCategory.OVERLOADED
        assert "Bad Gateway" in adapter.classify_http_error(502, {}, html).message

    # --- over real sockets, against the reference simulator ----------------------------

    @pytest.fixture
    def sim(self, request: pytest.FixtureRequest) -> Any:
        try:
            return request.getfixturevalue("simulator")
        except pytest.FixtureLookupError:
            pytest.skip("the simulator fixture is not available")

    def sim_config(self, sim: Any, model: str, **changes: Any) -> EndpointConfig:
        base_url = sim.openai_base if self.sim_on_openai_base else sim.base_url
        return self.config(base_url=base_url, model=model, **changes)

    def test_it_streams_text_usage_and_its_end_from_the_simulator(self, sim: Any) -> None:
        result = stream(self.sim_config(sim, "sim-fast+tokens=40"), max_tokens=100)
        assert result.status == 200 and result.error is None
        truth = sim.truth(result.headers["x-sim-request-id"])
        assert result.text.strip()
        assert result.usage is not None
        assert result.usage.output_tokens == truth["output_tokens"] == 40
        assert result.usage.input_tokens == truth["prompt_tokens"]
        assert result.finish is not None and result.finish.outcome == ""
        assert result.end_seen is not get_adapter(self.protocol).ends_on_close

    def test_it_streams_whether_or_not_the_base_url_has_its_version(self, sim: Any) -> None:
        version = "/v1beta" if self.protocol == "gemini" else "/v1"
        for base_url in (sim.base_url, sim.base_url + version, sim.base_url + version + "/"):
            config = self.config(base_url=base_url, model="sim-fast+tokens=10")
            result = stream(config, max_tokens=20)
            assert result.status == 200 and result.error is None, base_url
            assert result.usage is not None and result.usage.output_tokens == 10

    def test_it_marks_a_reply_cut_by_max_tokens_as_truncated(self, sim: Any) -> None:
        result = stream(self.sim_config(sim, "sim-fast"), max_tokens=12)
        assert result.error is None
        assert result.usage is not None and result.usage.output_tokens == 12
        assert result.finish is not None and result.finish.outcome == ErrorCategory.TRUNCATED

    def test_it_streams_reasoning_before_the_answer_from_the_simulator(self, sim: Any) -> None:
        result = stream(
            self.sim_config(sim, "sim-reasoning+tokens=60+ttft=10+tps=3000"), max_tokens=200
        )
        assert result.error is None
        truth = sim.truth(result.headers["x-sim-request-id"])
        deltas = [i for i in result.items if isinstance(i, Delta)]
        assert deltas[0].reasoning and not deltas[-1].reasoning
        assert result.reasoning and result.text
        assert result.usage is not None
        assert result.usage.reasoning_tokens == truth["reasoning_tokens"] > 0

    def test_it_parses_comments_and_crlf_framing_from_the_simulator(self, sim: Any) -> None:
        result = stream(self.sim_config(sim, "sim-fast+tokens=30+fault=comments"), max_tokens=64)
        assert result.error is None
        assert result.usage is not None and result.usage.output_tokens == 30

    def test_it_streams_without_usage_when_the_provider_sends_none(self, sim: Any) -> None:
        result = stream(self.sim_config(sim, "sim-fast+tokens=20+fault=no_usage"), max_tokens=64)
        assert result.error is None and result.text
        assert result.usage is None or result.usage.output_tokens is None

    @pytest.mark.parametrize(
        ("fault", "category"),
        [
            ("429", ErrorCategory.RATE_LIMITED),
            ("500", ErrorCategory.SERVER_ERROR),
            ("529", ErrorCategory.OVERLOADED),
            ("401", ErrorCategory.AUTH),
            ("not_sse", ErrorCategory.SERVER_ERROR),
            ("drop", ErrorCategory.STREAM_BROKEN),
            ("malformed", ErrorCategory.STREAM_BROKEN),
        ],
    )
    def test_it_classifies_simulator_faults(self, sim: Any, fault: str, category: str) -> None:
        result = stream(self.sim_config(sim, f"sim-fast+tokens=30+fault={fault}"), max_tokens=64)
        assert result.error is not None
        assert result.error.category == category
        assert SECRET not in result.error.message
        if fault == "429":
            assert result.error.retry_after_s is not None and result.error.retry_after_s > 0
        if fault in {"drop", "malformed"}:
            assert result.text  # the half sent before the fault still arrived

    def test_it_classifies_a_mid_stream_error_event(self, sim: Any) -> None:
        result = stream(self.sim_config(sim, "sim-fast+tokens=30+fault=error_event"), max_tokens=64)
        assert result.status == 200 and result.text
        assert result.error is not None
        assert result.error.category in {ErrorCategory.OVERLOADED, ErrorCategory.SERVER_ERROR}
        assert not result.end_seen

    def test_it_turns_a_stall_into_stream_broken_after_the_first_token(self, sim: Any) -> None:
        config = self.sim_config(sim, "sim-fast+tokens=30+fault=stall")
        result = stream(config, max_tokens=64, read_timeout_s=0.5)
        assert result.text
        assert result.error is not None and result.error.category == ErrorCategory.STREAM_BROKEN
