"""Shared pieces of the protocol modules: request summary, validation helpers, SSE framing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

# Error kinds every protocol renders in its own shape (see each module's ERRORS table).
ERROR_KINDS = (
    "bad_request",
    "auth_missing",
    "auth_invalid",
    "not_found",
    "rate_limited",
    "server_error",
    "overloaded",
)


class BadRequest(ValueError):
    """The request body is not one the protocol accepts; the message goes into the 400 body."""


@dataclass(frozen=True, slots=True)
class ParsedRequest:
    model: str
    prompt_chars: int
    max_tokens: int | None  # None when the request set no limit
    include_usage: bool  # the client asked for usage (or the protocol always sends it)
    system_chars: int = 0  # the system prompt, read from the protocol's own place
    tool_names: tuple[str, ...] = ()  # tools sent in the protocol's own shape
    tool_chars: int = 0  # their canonical JSON: tools cost prefill
    lane: str = "standard"  # the lane served (providers.simulator.lanes), set by the server

    @property
    def input_chars(self) -> int:
        return self.prompt_chars + self.system_chars + self.tool_chars


@dataclass(frozen=True, slots=True)
class Rendered:
    """An HTTP error answer: status, JSON body bytes and extra headers."""

    status: int
    body: bytes
    headers: dict[str, str]


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes, as the OpenAI and Anthropic APIs send them."""
    return json.dumps(obj, separators=(",", ":")).encode()


def sse(data: bytes, nl: bytes, event: bytes = b"") -> bytes:
    """One SSE event: optional `event:` line, one `data:` line, blank line; `nl` is LF or CRLF."""
    if event:
        return b"event: " + event + nl + b"data: " + data + nl + nl
    return b"data: " + data + nl + nl


def require_model(body: dict[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("you must provide a model parameter")
    return model


def require_stream(body: dict[str, Any]) -> None:
    if body.get("stream") is not True:
        raise BadRequest("this simulator only serves streamed responses: set stream to true")


def optional_limit(body: dict[str, Any], *keys: str, required: bool = False) -> int | None:
    """The first of `keys` present in body as a positive integer (booleans are not numbers)."""
    for key in keys:
        if key in body and body[key] is not None:
            value = body[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BadRequest(f"{key} must be a positive integer, got {value!r}")
            return value
    if required:
        raise BadRequest(f"{keys[0]}: field required")
    return None


def text_chars(content: Any, where: str) -> int:
    """Characters of text in a message content: a string or a list of parts with `text`."""
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, str):
                total += len(part)
            elif isinstance(part, dict):
                text = part.get("text")
                total += len(text) if isinstance(text, str) else 0
            else:
                raise BadRequest(f"{where} parts must be objects")
        return total
    raise BadRequest(f"{where} must be a string or a list of parts")


def prompt_tokens(chars: int) -> int:
    """Input tokens as the simulator reports them: about four characters per token."""
    return max(1, (chars + 3) // 4)


class Encoder(Protocol):
    """What the stream needs from a protocol: SSE-framed bytes for each moment of a reply.

    `text` is a JSON string body (already escaped); `tokens` is how many tokens it holds.
    """

    nl: bytes

    def start(self) -> bytes: ...
    def begin(self, *, reasoning: bool, first: bool) -> bytes: ...
    def delta(self, text: bytes, reasoning: bool, tokens: int) -> bytes: ...
    def end(self, *, reasoning: bool) -> bytes: ...
    def finish(self, *, truncated: bool, output_tokens: int, reasoning_tokens: int) -> bytes: ...
    def error_event(self) -> bytes: ...
    def malformed(self) -> bytes: ...
    def comment(self, text: bytes = b"keep-alive") -> bytes: ...


class EncoderBase:
    """State and defaults shared by the protocol encoders; `nl` is the line terminator (LF or
    CRLF). Subclasses pre-serialise their constant byte pieces in `_setup()`, so that `delta()`
    (called between a token's release and its write) only concatenates bytes."""

    __slots__ = (
        "nl",
        "_rid",
        "_model",
        "_created",
        "_prompt_tokens",
        "_usage",
        "_text_head",
        "_tier",
    )

    def __init__(
        self,
        *,
        request_id: str,
        model: str,
        created: int,
        prompt_tokens: int,
        include_usage: bool,
        nl: bytes,
        served_tier: str = "",
    ) -> None:
        self.nl = nl
        self._tier = served_tier  # the lane served, as the API names it ("" = unsaid)
        self._rid = request_id
        self._model = model
        self._created = created  # Unix seconds
        self._prompt_tokens = prompt_tokens
        self._usage = include_usage
        self._setup()

    def _setup(self) -> None:
        """Pre-serialise the byte pieces this protocol's events are built from."""

    def start(self) -> bytes:
        """Events sent right after the headers, before the first token."""
        return b""

    def begin(self, *, reasoning: bool, first: bool) -> bytes:
        """Events that open a reasoning or answer part, sent with its first token."""
        return b""

    def end(self, *, reasoning: bool) -> bytes:
        """Events that close a part."""
        return b""

    def comment(self, text: bytes = b"keep-alive") -> bytes:
        return b": " + text + self.nl + self.nl

    def malformed(self) -> bytes:
        """The start of an answer delta cut off before its JSON closes (the `malformed` fault)."""
        return self._text_head + b"unterminated" + self.nl + self.nl
