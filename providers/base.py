"""What every protocol adapter provides, and the items it turns SSE events into.

Adapters build the streaming request and parse events. They never read the clock, touch the
database, or log anything: timing lives in benchmarks/measure/ alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .prompt import Prompt


class ErrorCategory:
    RATE_LIMITED = "rate_limited"
    OVERLOADED = "overloaded"
    AUTH = "auth"
    BAD_REQUEST = "bad_request"
    NOT_FOUND = "not_found"
    QUOTA_EXHAUSTED = "quota_exhausted"
    # No connection: refused, DNS failure, TLS handshake or certificate failure (not a timeout).
    UNREACHABLE = "unreachable"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    STREAM_BROKEN = "stream_broken"
    # Outcomes that are not errors of the provider but are not clean stops either.
    TRUNCATED = "truncated"
    CONTENT_FILTERED = "content_filtered"
    # The model declined (refusal text instead of an answer): timings kept, no speed statistics.
    REFUSED = "refused"

    ERRORS = (
        RATE_LIMITED,
        OVERLOADED,
        AUTH,
        BAD_REQUEST,
        NOT_FOUND,
        QUOTA_EXHAUSTED,
        UNREACHABLE,
        TIMEOUT,
        SERVER_ERROR,
        STREAM_BROKEN,
    )


@dataclass(frozen=True, slots=True)
class EndpointConfig:
    """Everything needed to stream from one endpoint; plain data, no ORM."""

    base_url: str
    protocol: str
    model: str
    api_key: str | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    max_tokens_field: str = ""
    reasoning_effort: str = ""
    extra_body: dict[str, Any] = field(default_factory=dict)
    lane: str = ""  # providers.lanes: "" or "standard" asks for nothing special
    # Cloud auth that is not a static key (a cached OAuth2 token, a SigV4 signer); see Credential.
    credential: Credential | None = None


@dataclass(frozen=True, slots=True)
class RequestSpec:
    method: str
    url: str
    headers: dict[str, str]
    json: dict[str, Any]
    # The exact body bytes when the protocol signs them (SigV4); None: httpx encodes `json`.
    content: bytes | None = None


class Credential(Protocol):
    """Auth read from the environment that is more than a key: a token or a request signature.

    `headers` returns the auth headers for one built request; it may do I/O (a token refresh),
    so it is called while the request is prepared, before any clock starts. `invalidate` drops
    a cached token the server refused (HTTP 401), so the next request fetches a fresh one.
    Neither ever returns or logs anything but the headers themselves.
    """

    def headers(self, spec: RequestSpec) -> dict[str, str]: ...

    def invalidate(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str  # "message" when the stream sent no `event:` line
    data: str
    id: str = ""


# --- items an adapter yields from one SSE event ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Delta:
    """Generated text. `reasoning` marks thinking/reasoning text rather than the answer;
    `refusal` marks answer text that declines the request (OpenAI `refusal` deltas)."""

    text: str
    reasoning: bool = False
    refusal: bool = False


class ReasoningMode:
    """How a stream's reasoning arrived (Sample.reasoning_mode, docs/design.md §4 decode_tps)."""

    NONE = "none"  # no reasoning
    STREAMED = "streamed"  # the reasoning text itself streamed: every output token is in the window
    SUMMARIZED = "summarized"  # only a summary streamed (Responses summaries, Claude 4 thinking)
    HIDDEN = "hidden"  # counted but not streamed (o-series Chat, Anthropic redacted thinking)

    CHOICES = (NONE, STREAMED, SUMMARIZED, HIDDEN)


@dataclass(frozen=True, slots=True)
class ReasoningShown:
    """The provider says how its reasoning is shown: ReasoningMode.SUMMARIZED or HIDDEN, or
    STREAMED for a reasoning block whose text should follow (none following means hidden).

    Yielded with a reasoning block (a summary delta, a redacted_thinking or thinking block);
    streams that just send reasoning text need not yield it.
    """

    mode: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as reported so far; a later Usage replaces an earlier one field by field.

    output_tokens includes reasoning tokens (normalised per protocol, e.g. Gemini adds thoughts).
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Finish:
    """The provider's stop signal, raw reason plus its classification.

    outcome: "" for a normal stop, or ErrorCategory.TRUNCATED / CONTENT_FILTERED / REFUSED, or
    an error category (e.g. finish_reason "error").
    """

    reason: str
    outcome: str = ""


@dataclass(frozen=True, slots=True)
class StreamError:
    """An error reported by the provider (inside the stream or as an HTTP error body)."""

    category: str
    message: str
    retry_after_s: float | None = None
    http_status: int | None = None


@dataclass(frozen=True, slots=True)
class ProviderLatency:
    """The provider's own figure for how long it took (Bedrock's `metadata.metrics.latencyMs`).

    Kept beside tokspeed's measured timings, never instead of them: the gap between the two is
    what the network and queueing in front of the provider's own clock cost.
    """

    ms: float


@dataclass(frozen=True, slots=True)
class ServedLane:
    """The lane the provider says it served (providers.lanes.served: OpenAI's `service_tier`,
    Anthropic's `usage.service_tier`, Bedrock's `performanceConfig` / `serviceTier` in its
    `metadata` event), in tokspeed's words."""

    lane: str


@dataclass(frozen=True, slots=True)
class End:
    """The protocol's normal end marker ([DONE], message_stop, response.completed...)."""


Item = Delta | Usage | Finish | StreamError | ProviderLatency | End | ReasoningShown | ServedLane


class Adapter(Protocol):
    """One wire protocol. Modules openai_chat, openai_responses, anthropic_messages, gemini,
    azure_openai, bedrock, vertex.

    A protocol whose stream is not SSE also sets `media_type` (the Content-Type it answers with)
    and `new_decoder()` (an object with SSEDecoder's feed/close); registry.stream_format reads
    them, with SSE as the default.
    """

    name: str
    # True when the protocol has no end marker and a clean EOF after a Finish is a normal end.
    ends_on_close: bool

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        """The streaming request: usage requested, right max-tokens field, reasoning options;
        a Prompt's system text and tools each in the API's own place (providers.prompt)."""
        ...

    def parse(self, event: SSEEvent) -> list[Item]:
        """Turn one dispatched SSE event into items (possibly none, e.g. a role-only chunk)."""
        ...

    def classify_http_error(self, status: int, headers: dict[str, str], body: bytes) -> StreamError:
        """Classify a non-2xx answer (docs/protocols.md §8), keeping retry-after."""
        ...
