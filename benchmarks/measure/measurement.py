"""What one streamed request measured (docs/design.md §4) and the limits every stream runs under."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# Every §4 field stored on benchmarks.models.Sample (all columns except id, run, slot, index).
SAMPLE_FIELDS: tuple[str, ...] = (
    "started_at",
    "connect_ms",
    "ttfb_ms",
    "first_event_ms",
    "ttft_ms",
    "ttfa_ms",
    "last_token_ms",
    "total_ms",
    "output_tokens",
    "tokens_source",
    "reasoning_tokens",
    "reasoning_mode",
    "input_tokens",
    "cached_tokens",
    "decode_tps",
    "tpot_ms",
    "itl_p50_ms",
    "itl_p90_ms",
    "itl_p99_ms",
    "itl_max_ms",
    "chunks",
    "coalesced_events",
    "saturated",
    "itl_withheld",
    "tokens_per_chunk",
    "finish_reason",
    "outcome",
    "http_status",
    "error_category",
    "error_message",
    "retry_after_s",
    "output_chars",
    "output_sha256",
    "connect_address",
    "provider_latency_ms",
    "served_lane",
)


@dataclass(slots=True)
class Measurement:
    """One streamed request. Times are ms after t0 (`perf_counter_ns()` just before sending).

    A field is None when the stream never got that far (an error before the first token leaves
    ttft_ms None) or, for the speed fields (decode_tps, tpot_ms, itl_*, tokens_per_chunk), when
    the request was not ok: error samples keep their timings. A refused answer that streamed
    keeps its speed fields too, but never enters speed statistics (benchmarks.stats).
    """

    started_at: datetime
    t0_ns: int
    connect_ms: float | None = None
    ttfb_ms: float | None = None
    first_event_ms: float | None = None
    ttft_ms: float | None = None
    ttfa_ms: float | None = None
    last_token_ms: float | None = None
    total_ms: float | None = None
    output_tokens: int | None = None
    tokens_source: str = ""  # "usage" (reported by the provider) or "estimate" (from the text)
    reasoning_tokens: int | None = None
    # How reasoning arrived: none / streamed / summarized / hidden (providers.base.ReasoningMode).
    # With summarized or hidden, decode_tps counts answer tokens from ttfa_ms.
    reasoning_mode: str = "none"
    input_tokens: int | None = None
    cached_tokens: int | None = None
    # (tokens − 1) / ((last_token_ms − start) / 1000) = 1000 / tpot_ms; start = ttft_ms, or
    # ttfa_ms with answer tokens only when reasoning_mode is summarized or hidden.
    decode_tps: float | None = None
    tpot_ms: float | None = None
    itl_p50_ms: float | None = None
    itl_p90_ms: float | None = None
    itl_p99_ms: float | None = None
    itl_max_ms: float | None = None
    chunks: int = 0  # events that carried generated text
    # Text events that arrived in a network read shared with another: their gaps are shares of
    # the silence before the read.
    coalesced_events: int = 0
    saturated: bool = False  # most text events were coalesced: the client read too slowly
    # Which ITL figures are None because bursts left them unknown (timing.ItlStats.withheld):
    # "all" (p50 and above), "tail" (max, and p99 or p90 up when unknown too), "" none.
    itl_withheld: str = ""
    tokens_per_chunk: float | None = None  # tokens ÷ network reads that carried text
    finish_reason: str = ""
    outcome: str = ""  # "truncated" / "content_filtered" / "refused"; "" for a clean stop
    http_status: int | None = None
    error_category: str = ""
    error_message: str = ""  # redacted: never contains the API key
    retry_after_s: float | None = None
    output_chars: int = 0  # characters of the answer text (reasoning text excluded)
    output_sha256: str = ""
    connect_address: str = ""  # the address connected to (of several, the one that won)
    # The provider's own latency figure (Bedrock's metrics.latencyMs), beside ours, not a
    # replacement: it starts and stops on the provider's clock, inside its network.
    provider_latency_ms: float | None = None
    served_lane: str = ""  # the lane the provider says it served (providers.lanes); "" unknown
    # Not stored: the server's request id (x-sim-request-id, x-request-id...), for tracing, and
    # whether tokspeed's reference simulator answered (it sends x-sim-request-id).
    request_id: str = ""
    simulated: bool = False

    @property
    def ok(self) -> bool:
        return not self.error_category

    @property
    def e2e_ms(self) -> float | None:
        return self.total_ms

    def sample_values(self) -> dict[str, Any]:
        """The values of SAMPLE_FIELDS as Python objects, ready for `Sample(**values)`."""
        return {name: getattr(self, name) for name in SAMPLE_FIELDS}

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: §4 field names plus e2e_ms; started_at as an ISO 8601 string."""
        values = self.sample_values()
        values["started_at"] = self.started_at.isoformat()
        values["e2e_ms"] = self.e2e_ms
        return values


@dataclass(frozen=True, slots=True)
class Limits:
    """Every stream has all four (docs/design.md §9).

    connect_timeout_s: TCP + TLS setup. idle_timeout_s: longest wait for the next *data* event
    (keep-alive comments do not count, so a provider cannot hold a request forever with them);
    before the first event it bounds the wait for the answer. deadline_s: wall-clock limit for
    the whole request from t0. max_bytes: cap on the response body.
    """

    connect_timeout_s: float = 10.0
    idle_timeout_s: float = 120.0
    deadline_s: float = 600.0
    max_bytes: int = 16 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in ("connect_timeout_s", "idle_timeout_s", "deadline_s", "max_bytes"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Limits.{name} must be positive, got {getattr(self, name)!r}")

    @classmethod
    def from_settings(cls) -> Limits:
        from django.conf import settings

        return cls(
            connect_timeout_s=settings.TOKSPEED_CONNECT_TIMEOUT_S,
            idle_timeout_s=settings.TOKSPEED_IDLE_TIMEOUT_S,
            deadline_s=settings.TOKSPEED_DEADLINE_S,
            max_bytes=settings.TOKSPEED_MAX_BYTES,
        )
