"""AWS Bedrock ConverseStream: the binary event stream, SigV4 and Bedrock's exceptions."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from botocore.credentials import Credentials

from benchmarks.measure import Limits, measure_request
from benchmarks.measure.http.transport import make_client
from benchmarks.stats import summarize
from providers.aws_auth import SigV4Credential, region_of
from providers.base import (
    Delta,
    End,
    EndpointConfig,
    ErrorCategory,
    Finish,
    ProviderLatency,
    StreamError,
    Usage,
)
from providers.config import credential_for
from providers.simulator.cloud_auth import TEST_ACCESS_KEY, TEST_SECRET_KEY
from providers.simulator.protocols.bedrock import event_headers, exception_frame, frame
from tests.adapter_contract import AdapterContract, parse_bytes, stream


def _event(kind: str, body: dict[str, Any]) -> bytes:
    return frame(event_headers(kind), json.dumps(body).encode())


# A ConverseStream answer as Bedrock sends it (Claude with extended thinking, shortened).
TRANSCRIPT = b"".join(
    [
        _event("messageStart", {"role": "assistant"}),
        _event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "The user greets."}}},
        ),
        _event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQBCkYIB"}}},
        ),
        _event("contentBlockStop", {"contentBlockIndex": 0}),
        _event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Hello"}}),
        _event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": " there!"}}),
        _event("contentBlockStop", {"contentBlockIndex": 1}),
        _event("messageStop", {"stopReason": "end_turn"}),
        _event(
            "metadata",
            {
                "usage": {
                    "inputTokens": 12,
                    "outputTokens": 31,
                    "totalTokens": 51,
                    "cacheReadInputTokens": 8,
                },
                "metrics": {"latencyMs": 812},
            },
        ),
    ]
)
TEST_CREDENTIALS = Credentials(TEST_ACCESS_KEY, TEST_SECRET_KEY)


class TestBedrockContract(AdapterContract):
    protocol = "bedrock_converse"
    TRANSCRIPT = TRANSCRIPT
    expected_text = "Hello there!"
    expected_reasoning = "The user greets."
    # inputTokens excludes cache reads: 12 + 8 prompt tokens in all.
    expected_usage = Usage(
        input_tokens=20, output_tokens=31, reasoning_tokens=None, cached_tokens=8
    )
    key_header = "authorization"  # a Bedrock API key is a bearer token
    default_max_field = "maxTokens"
    rate_limit_body = {"message": "Too many requests, please wait before trying."}

    def test_it_streams_whether_or_not_the_base_url_has_its_version(self, sim: Any) -> None:
        # Bedrock's paths carry no version: the base URL is the regional host, slash or not.
        for base_url in (sim.base_url, sim.base_url + "/"):
            result = stream(
                self.config(base_url=base_url, model="sim-fast+tokens=10"), max_tokens=20
            )
            assert result.status == 200 and result.error is None, base_url
            assert result.usage is not None and result.usage.output_tokens == 10

    def test_it_streams_reasoning_before_the_answer_from_the_simulator(self, sim: Any) -> None:
        # Bedrock's usage has no reasoning count: only the order and both texts are checked.
        result = stream(
            self.sim_config(sim, "sim-reasoning+tokens=60+ttft=10+tps=3000"), max_tokens=200
        )
        assert result.error is None
        deltas = [i for i in result.items if isinstance(i, Delta)]
        assert deltas[0].reasoning and not deltas[-1].reasoning
        assert result.usage is not None and result.usage.output_tokens == 60


def signed(sim: Any, model: str, credentials: Credentials = TEST_CREDENTIALS) -> EndpointConfig:
    return EndpointConfig(
        base_url=sim.base_url,
        protocol="bedrock_converse",
        model=model,
        credential=SigV4Credential("us-west-2", credentials),
    )


def test_it_signs_with_sigv4_and_the_simulator_verifies_the_signature(simulator: Any) -> None:
    result = stream(signed(simulator, "sim-fast+tokens=25"))
    assert result.error is None and result.end_seen
    assert result.usage is not None and result.usage.output_tokens == 25


def test_it_reports_a_wrong_secret_as_an_auth_error(simulator: Any) -> None:
    wrong = Credentials(TEST_ACCESS_KEY, "not-the-secret")
    result = stream(signed(simulator, "sim-fast+tokens=5", wrong))
    assert result.status == 403
    assert result.error is not None and result.error.category == ErrorCategory.AUTH
    assert "not-the-secret" not in result.error.message


def test_it_signs_session_tokens_and_inference_profile_arns(simulator: Any) -> None:
    with_token = Credentials(TEST_ACCESS_KEY, TEST_SECRET_KEY, "FwoGZXIvYXdzEBYaDH")
    config = signed(simulator, "sim-fast+tokens=5", with_token)
    result = stream(config)
    assert result.error is None
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.sim-fast+tokens=5"
    result = stream(signed(simulator, arn))
    assert result.status == 404  # signed and accepted; the simulator knows no such profile
    assert result.error is not None and result.error.category == ErrorCategory.NOT_FOUND


def test_it_reads_credentials_from_the_environment_only(
    monkeypatch: pytest.MonkeyPatch, simulator: Any, tmp_path: Any
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", TEST_ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", TEST_SECRET_KEY)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    credential = credential_for("bedrock_converse", api_key_env="", base_url=simulator.base_url)
    assert isinstance(credential, SigV4Credential) and credential.region == "eu-west-3"
    config = EndpointConfig(
        base_url=simulator.base_url,
        protocol="bedrock_converse",
        model="sim-fast+tokens=9",
        credential=credential,
    )
    limits = Limits(connect_timeout_s=5, idle_timeout_s=5, deadline_s=10, max_bytes=1 << 20)

    async def measure() -> Any:
        async with make_client(limits=limits, max_connections=1) as client:
            return await measure_request(client, config, prompt="Hi", max_tokens=20, limits=limits)

    m = asyncio.run(measure())
    assert m.ok and m.output_tokens == 9 and m.tokens_source == "usage"
    assert m.ttft_ms is not None and m.ttft_ms > 0
    assert TEST_SECRET_KEY not in repr(m)


def test_it_takes_the_region_from_the_runtime_host() -> None:
    assert region_of("https://bedrock-runtime.ap-northeast-1.amazonaws.com") == "ap-northeast-1"
    assert region_of("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com") == "us-gov-west-1"


@pytest.mark.parametrize(
    ("exception", "category"),
    [
        ("throttlingException", ErrorCategory.RATE_LIMITED),
        ("modelStreamErrorException", ErrorCategory.SERVER_ERROR),
        ("serviceUnavailableException", ErrorCategory.OVERLOADED),
        ("validationException", ErrorCategory.BAD_REQUEST),
        ("internalServerException", ErrorCategory.SERVER_ERROR),
    ],
)
def test_it_classifies_exception_frames_mid_stream(exception: str, category: str) -> None:
    head = _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}})
    items = parse_bytes("bedrock_converse", head + exception_frame(exception, "went wrong"))
    assert items[0] == Delta("Hi")
    assert isinstance(items[-1], StreamError) and items[-1].category == category
    assert "went wrong" in items[-1].message


def test_it_reports_a_broken_frame_and_keeps_what_came_before() -> None:
    good = _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}})
    bad = bytearray(_event("contentBlockDelta", {"delta": {"text": "lost"}}))
    bad[20] ^= 0xFF  # a flipped payload bit: the message CRC no longer matches
    items = parse_bytes("bedrock_converse", good + bytes(bad) + good)
    assert items[0] == Delta("Hi")
    assert isinstance(items[1], StreamError) and items[1].category == ErrorCategory.STREAM_BROKEN
    assert "ChecksumMismatch" in items[1].message
    assert len(items) == 2  # nothing after a broken frame can be trusted


def test_it_maps_stop_reasons_and_ends_on_metadata() -> None:
    items = parse_bytes(
        "bedrock_converse",
        _event("messageStop", {"stopReason": "max_tokens"}),
        _event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 4}}),
    )
    assert items[0] == Finish("max_tokens", ErrorCategory.TRUNCATED)
    assert items[-1] == End()
    guard = parse_bytes(
        "bedrock_converse", _event("messageStop", {"stopReason": "guardrail_intervened"})
    )
    assert guard == [Finish("guardrail_intervened", ErrorCategory.CONTENT_FILTERED)]


def test_it_keeps_bedrocks_own_latency_from_the_metadata_event() -> None:
    items = parse_bytes("bedrock_converse", TRANSCRIPT)
    assert [i for i in items if isinstance(i, ProviderLatency)] == [ProviderLatency(812.0)]
    assert items[-1] == End()  # the figure comes before the end, so the recorder keeps it
    odd = parse_bytes(
        "bedrock_converse",
        _event("metadata", {"usage": {"outputTokens": 3}, "metrics": {"latencyMs": -5}}),
        _event("metadata", {"metrics": {"latencyMs": "812"}}),
    )
    assert not any(isinstance(i, ProviderLatency) for i in odd)  # never a made-up figure


def test_it_stores_the_providers_latency_beside_the_measured_timings(simulator: Any) -> None:
    config = signed(simulator, "sim-fast+tokens=20+ttft=80+tps=400")
    limits = Limits(connect_timeout_s=5, idle_timeout_s=5, deadline_s=10, max_bytes=1 << 20)

    async def measure() -> Any:
        async with make_client(limits=limits, max_connections=1) as client:
            return await measure_request(client, config, prompt="Hi", max_tokens=50, limits=limits)

    m = asyncio.run(measure())
    assert m.ok and m.total_ms is not None and m.provider_latency_ms is not None
    # The simulator's clock starts after our request reached it and stops before its last
    # frame left, so its whole-millisecond figure sits inside our total and covers its TTFT.
    assert 79 <= m.provider_latency_ms <= m.total_ms
    assert m.sample_values()["provider_latency_ms"] == m.provider_latency_ms
    assert m.as_dict()["provider_latency_ms"] == m.provider_latency_ms
    assert summarize([m])["provider_latency_ms"]["p50"] == m.provider_latency_ms
