"""AWS Bedrock ConverseStream (docs/protocols.md §9): binary event-stream frames, SigV4 or a
Bedrock API key.

Frames are written here by hand (the client decodes them with botocore's parser, so the two
sides are independent): prelude (total length, headers length, CRC32), string headers
(`:event-type`, `:content-type`, `:message-type`), JSON payload, CRC32 of the whole message.
"""

from __future__ import annotations

import struct
import time
import zlib
from typing import Any

from . import carried as carried_parts
from .carried import astuple_carried
from .common import BadRequest, EncoderBase, ParsedRequest, Rendered, dumps, optional_limit

NAME = "bedrock_converse"
CONTENT_TYPE = "application/vnd.amazon.eventstream"
AUTH = "sigv4"

_ERRORS: dict[str, tuple[int, str, str]] = {
    "bad_request": (400, "ValidationException", "Malformed input request"),
    "auth_missing": (403, "AccessDeniedException", "Missing Authentication Token"),
    "auth_invalid": (
        403,
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    ),
    "not_found": (404, "ResourceNotFoundException", "Model not found"),
    "rate_limited": (429, "ThrottlingException", "Too many requests, please wait before trying."),
    "server_error": (500, "InternalServerException", "The server encountered an error."),
    "overloaded": (503, "ServiceUnavailableException", "The service is unavailable."),
}


def error(
    kind: str, message: str | None, *, request_id: str, retry_after_s: float | None = None
) -> Rendered:
    """Bedrock's error answer: `{"message"}` with the type in x-amzn-ErrorType."""
    status, type_, default = _ERRORS[kind]
    headers = {"x-amzn-errortype": f"{type_}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
    headers["x-amzn-requestid"] = request_id
    return Rendered(status, dumps({"message": message or default}), headers)


def parse(body: dict[str, Any], path_model: str | None = None) -> ParsedRequest:
    if not path_model:
        raise BadRequest("the model id is missing from the URL")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must contain at least one message")
    chars = 0
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            raise BadRequest(f"messages.{index}.content must be a list of content blocks")
        chars += sum(len(b["text"]) for b in content if isinstance(b, dict) and "text" in b)
    carried = carried_parts.bedrock(body)
    config = body.get("inferenceConfig") or {}
    if not isinstance(config, dict):
        raise BadRequest("inferenceConfig must be an object")
    limit = optional_limit(config, "maxTokens")
    return ParsedRequest(path_model, chars, limit, True, *astuple_carried(carried))


def _header(name: bytes, value: bytes) -> bytes:
    return bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value


_JSON = _header(b":content-type", b"application/json")


def frame(headers: bytes, payload: bytes) -> bytes:
    """One event-stream message with both checksums."""
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def event_headers(event_type: str) -> bytes:
    return (
        _header(b":event-type", event_type.encode()) + _JSON + _header(b":message-type", b"event")
    )


def exception_frame(exception_type: str, message: str) -> bytes:
    headers = (
        _header(b":exception-type", exception_type.encode())
        + _JSON
        + _header(b":message-type", b"exception")
    )
    return frame(headers, dumps({"message": message}))


_START = event_headers("messageStart")
_DELTA = event_headers("contentBlockDelta")
_STOP_BLOCK = event_headers("contentBlockStop")
_STOP = event_headers("messageStop")
_METADATA = event_headers("metadata")


def served_fields(tier: str) -> dict[str, Any]:
    """What the metadata event says was used (simulator.lanes.says): the performance config for
    latency-optimized and standard requests, the service tier for priority, flex and standard."""
    if tier == "optimized":
        return {"performanceConfig": {"latency": "optimized"}}
    if tier == "standard":
        return {"performanceConfig": {"latency": "standard"}, "serviceTier": {"type": "default"}}
    if tier:
        return {"serviceTier": {"type": tier}}
    return {}


class Encoder(EncoderBase):
    __slots__ = ("_block", "_t0")

    def _setup(self) -> None:
        self._block = 0
        self._t0 = time.perf_counter()
        self._text_head = b'{"contentBlockIndex":0,"delta":{"text":"'

    def start(self) -> bytes:
        return frame(_START, b'{"role":"assistant"}')

    def delta(self, text: bytes, reasoning: bool, tokens: int) -> bytes:
        index = str(self._block).encode()
        if reasoning:
            inner = b'{"reasoningContent":{"text":"' + text + b'"}}'
        else:
            inner = b'{"text":"' + text + b'"}'
        return frame(_DELTA, b'{"contentBlockIndex":' + index + b',"delta":' + inner + b"}")

    def end(self, *, reasoning: bool) -> bytes:
        out = frame(_STOP_BLOCK, b'{"contentBlockIndex":' + str(self._block).encode() + b"}")
        self._block += 1
        return out

    def finish(self, *, truncated: bool, output_tokens: int, reasoning_tokens: int) -> bytes:
        reason = "max_tokens" if truncated else "end_turn"
        out = frame(_STOP, dumps({"stopReason": reason}))
        metadata: dict[str, Any] = {
            "metrics": {"latencyMs": int((time.perf_counter() - self._t0) * 1000)}
        }
        if self._usage:
            prompt = self._prompt_tokens
            metadata["usage"] = {
                "inputTokens": prompt,
                "outputTokens": output_tokens,
                "totalTokens": prompt + output_tokens,
            }
        metadata.update(served_fields(self._tier))
        return out + frame(_METADATA, dumps(metadata))

    def error_event(self) -> bytes:
        return exception_frame(
            "modelStreamErrorException", "The model encountered an error while streaming."
        )

    def malformed(self) -> bytes:
        """A delta frame whose message checksum is wrong (a corrupted frame)."""
        good = frame(_DELTA, b'{"contentBlockIndex":0,"delta":{"text":"unterminated"}}')
        return good[:-4] + struct.pack(">I", (zlib.crc32(good[:-4]) + 1) & 0xFFFFFFFF)

    def comment(self, text: bytes = b"keep-alive") -> bytes:
        return b""  # the event stream has no comments
