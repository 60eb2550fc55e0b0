"""Anthropic Messages (docs/protocols.md §4): `event:` lines, message_start → content blocks →
message_delta (cumulative usage) → message_stop; errors as `{"type":"error","error":{...}}`."""

from __future__ import annotations

import base64
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

NAME = "anthropic_messages"

_ERRORS: dict[str, tuple[int, str, str]] = {
    "bad_request": (400, "invalid_request_error", "invalid request"),
    "auth_missing": (401, "authentication_error", "x-api-key header is required"),
    "auth_invalid": (401, "authentication_error", "invalid x-api-key"),
    "not_found": (404, "not_found_error", "model not found"),
    "rate_limited": (
        429,
        "rate_limit_error",
        "This request would exceed the rate limit of this simulated model.",
    ),
    "server_error": (500, "api_error", "Internal server error"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
}


def error(
    kind: str, message: str | None, *, request_id: str, retry_after_s: float | None = None
) -> Rendered:
    """An Anthropic error body; the wait of a 429 goes only in the retry-after header."""
    status, type_, default = _ERRORS[kind]
    body = {
        "type": "error",
        "error": {"type": type_, "message": message or default},
        "request_id": f"req_{request_id}",
    }
    headers = {"request-id": f"req_{request_id}"}
    if kind in ("rate_limited", "overloaded", "server_error"):
        headers["x-should-retry"] = "true"
    return Rendered(status, dumps(body), headers)


def parse(body: dict[str, Any], path_model: str | None = None) -> ParsedRequest:
    model = require_model(body)
    limit = optional_limit(body, "max_tokens", required=True)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: at least one message is required")
    chars = 0
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise BadRequest(f"messages.{index}.role: Input should be 'user' or 'assistant'")
        chars += text_chars(message.get("content"), f"messages.{index}.content")
    carried = carried_parts.anthropic(body, text_chars(body.get("system"), "system"))
    require_stream(body)
    return ParsedRequest(model, chars, limit, True, *astuple_carried(carried))


class Encoder(EncoderBase):
    __slots__ = ("_index", "_tail")

    def _setup(self) -> None:
        self._index = -1  # index of the open content block
        self._text_head = b""  # set by begin(): the block index is part of every delta
        self._tail = b'"}}' + self.nl + self.nl

    def _event(self, payload: dict[str, Any]) -> bytes:
        return sse(dumps(payload), self.nl, payload["type"].encode())

    def start(self) -> bytes:
        message: dict[str, Any] = {
            "model": self._model,
            "id": f"msg_{self._rid}",
            "type": "message",
            "role": "assistant",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
        }
        if self._usage:
            # A placeholder output count, as the real API sends; the final one is in message_delta.
            message["usage"] = {
                "input_tokens": self._prompt_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
                "service_tier": self._tier or "standard",
            }
        ping = sse(b'{"type": "ping"}', self.nl, b"ping")
        return self._event({"type": "message_start", "message": message}) + ping

    def begin(self, *, reasoning: bool, first: bool) -> bytes:
        self._index += 1
        index = str(self._index).encode()
        delta_type = b"thinking_delta" if reasoning else b"text_delta"
        field = b"thinking" if reasoning else b"text"
        self._text_head = (
            b"event: content_block_delta"
            + self.nl
            + b'data: {"type":"content_block_delta","index":'
            + index
            + b',"delta":{"type":"'
            + delta_type
            + b'","'
            + field
            + b'":"'
        )
        block = (
            {"type": "thinking", "thinking": "", "signature": ""}
            if reasoning
            else {"type": "text", "text": ""}
        )
        return self._event(
            {"type": "content_block_start", "index": self._index, "content_block": block}
        )

    def delta(self, text: bytes, reasoning: bool, tokens: int) -> bytes:
        return self._text_head + text + self._tail

    def end(self, *, reasoning: bool) -> bytes:
        out = b""
        if reasoning:
            signature = base64.b64encode(f"tokspeed-simulated-{self._rid}".encode()).decode()
            out = self._event(
                {
                    "type": "content_block_delta",
                    "index": self._index,
                    "delta": {"type": "signature_delta", "signature": signature},
                }
            )
        return out + self._event({"type": "content_block_stop", "index": self._index})

    def finish(self, *, truncated: bool, output_tokens: int, reasoning_tokens: int) -> bytes:
        delta = {"stop_reason": "max_tokens" if truncated else "end_turn", "stop_sequence": None}
        payload: dict[str, Any] = {"type": "message_delta", "delta": delta}
        if self._usage:
            usage: dict[str, Any] = {
                "input_tokens": self._prompt_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": output_tokens,
            }
            if reasoning_tokens:
                usage["output_tokens_details"] = {"thinking_tokens": reasoning_tokens}
            payload["usage"] = usage
        return self._event(payload) + self._event({"type": "message_stop"})

    def error_event(self) -> bytes:
        return self._event(
            {
                "type": "error",
                "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"},
            }
        )
