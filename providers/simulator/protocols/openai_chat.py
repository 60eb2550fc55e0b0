"""OpenAI Chat Completions (docs/protocols.md §2): data-only chunks, usage chunk, `data: [DONE]`."""

from __future__ import annotations

from typing import Any

from . import carried as carried_parts
from .carried import astuple_carried
from .common import (
    BadRequest,
    EncoderBase,
    ParsedRequest,
    Rendered,
    dumps,
    optional_limit,
    require_model,
    require_stream,
    sse,
    text_chars,
)

NAME = "openai_chat"

_OPENAI_ERRORS: dict[str, tuple[int, str, str | None, str]] = {
    # kind: (status, type, code, default message)
    "bad_request": (400, "invalid_request_error", None, "invalid request"),
    "auth_missing": (
        401,
        "invalid_request_error",
        None,
        "You didn't provide an API key. You need to provide your API key in an Authorization "
        "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    ),
    "auth_invalid": (
        401,
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided. This is the tokspeed simulator.",
    ),
    "not_found": (404, "invalid_request_error", "model_not_found", "model not found"),
    "rate_limited": (
        429,
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests on this simulated model. Please try again later.",
    ),
    "server_error": (
        500,
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    "overloaded": (
        503,
        "service_unavailable_error",
        "server_is_overloaded",
        "The server is overloaded or not ready yet.",
    ),
}


def openai_error(
    kind: str, message: str | None, *, request_id: str, retry_after_s: float | None = None
) -> Rendered:
    """An OpenAI-style error body `{"error": {message, type, param, code}}` (§2.5); the wait
    of a 429 goes only in the retry-after header (set by the server)."""
    status, type_, code, default = _OPENAI_ERRORS[kind]
    body = {"error": {"message": message or default, "type": type_, "param": None, "code": code}}
    return Rendered(status, dumps(body), {"x-request-id": request_id})


error = openai_error


def parse(body: dict[str, Any], path_model: str | None = None) -> ParsedRequest:
    model = require_model(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty array")
    chars = system = 0
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(f"messages[{index}] must be an object with a role")
        count = text_chars(message.get("content"), f"messages[{index}].content")
        if message["role"] in ("system", "developer"):
            system += count
        else:
            chars += count
    carried = carried_parts.openai_chat(body, system)
    require_stream(body)
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise BadRequest("stream_options must be an object")
    include_usage = bool(options and options.get("include_usage") is True)
    limit = optional_limit(body, "max_completion_tokens", "max_tokens")
    return ParsedRequest(model, chars, limit, include_usage, *astuple_carried(carried))


class Encoder(EncoderBase):
    """Pre-serialised chunk pieces; `delta()` only concatenates bytes."""

    __slots__ = ("_head", "_tail", "_reason_head", "_delta_tail")

    def _setup(self) -> None:
        nl = self.nl
        self._head = (
            b'data: {"id":"chatcmpl-' + self._rid.encode() + b'","object":"chat.completion.chunk"'
            b',"created":'
            + str(self._created).encode()
            + b',"model":'
            + dumps(self._model)
            + (b',"service_tier":' + dumps(self._tier) if self._tier else b"")
            + b',"system_fingerprint":"fp_tokspeed_sim","choices":[{"index":0,"delta":'
        )
        self._tail = (
            b',"logprobs":null,"finish_reason":null}]'
            + (b',"usage":null' if self._usage else b"")
            + b"}"
            + nl
            + nl
        )
        self._text_head = self._head + b'{"content":"'
        self._reason_head = self._head + b'{"reasoning_content":"'
        self._delta_tail = b'"}' + self._tail

    def begin(self, *, reasoning: bool, first: bool) -> bytes:
        if not first:
            return b""
        return self._head + b'{"role":"assistant","content":"","refusal":null}' + self._tail

    def delta(self, text: bytes, reasoning: bool, tokens: int) -> bytes:
        return (self._reason_head if reasoning else self._text_head) + text + self._delta_tail

    def finish(self, *, truncated: bool, output_tokens: int, reasoning_tokens: int) -> bytes:
        reason = b'"length"' if truncated else b'"stop"'
        return self._close(self._stop_chunk(reason), output_tokens, reasoning_tokens)

    def filtered(self, *, output_tokens: int, reasoning_tokens: int) -> bytes:
        """A content-filter stop (the `content_filter` fault): what was sent is all there is."""
        stop = self._stop_chunk(b'"content_filter"')
        return self._close(stop, output_tokens, reasoning_tokens)

    def _stop_chunk(self, reason: bytes, extra: bytes = b"") -> bytes:
        """The chunk with the finish reason; `extra` adds fields to its choice."""
        usage_null = b',"usage":null' if self._usage else b""
        out = self._head + b"{}" + extra + b',"logprobs":null,"finish_reason":' + reason + b"}]"
        return out + usage_null + b"}" + self.nl + self.nl

    def _close(self, stop: bytes, output_tokens: int, reasoning_tokens: int) -> bytes:
        """The stop chunk, the usage chunk when asked for, then [DONE]."""
        out = stop
        if self._usage:
            prompt_tokens = self._prompt_tokens
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": output_tokens,
                "total_tokens": prompt_tokens + output_tokens,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": reasoning_tokens,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            }
            head = self._head[: -len(b'[{"index":0,"delta":')]
            out += head + b'[],"usage":' + dumps(usage) + b"}" + self.nl + self.nl
        return out + sse(b"[DONE]", self.nl)

    def error_event(self) -> bytes:
        _, type_, code, message = _OPENAI_ERRORS["server_error"]
        body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
        return sse(dumps(body), self.nl)
