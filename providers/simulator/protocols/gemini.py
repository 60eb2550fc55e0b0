"""Google Gemini `streamGenerateContent?alt=sse` (docs/protocols.md §5): CRLF-framed data-only
events, running usageMetadata, finishReason on the last chunk, no end sentinel."""

from __future__ import annotations

import json
from typing import Any

from . import carried as carried_parts
from .carried import astuple_carried
from .common import (
    BadRequest,
    EncoderBase,
    ParsedRequest,
    Rendered,
    optional_limit,
    text_chars,
)

NAME = "gemini"
NL = b"\r\n"  # Gemini frames every line with CRLF
_HEAD = b'data: {"candidates": [{"content": {"parts": [{"text": "'

_ERRORS: dict[str, tuple[int, str, str]] = {
    "bad_request": (400, "INVALID_ARGUMENT", "Invalid request"),
    "auth_missing": (
        403,
        "PERMISSION_DENIED",
        "Method doesn't allow unregistered callers (callers without established identity). "
        "Please use API Key or other form of API consumer identity to call this API.",
    ),
    "auth_invalid": (400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
    "not_found": (404, "NOT_FOUND", "model not found"),
    "rate_limited": (
        429,
        "RESOURCE_EXHAUSTED",
        "Resource has been exhausted (e.g. check quota) on this simulated model.",
    ),
    "server_error": (500, "INTERNAL", "An internal error has occurred. Please retry."),
    "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
}


def error(
    kind: str, message: str | None, *, request_id: str, retry_after_s: float | None = None
) -> Rendered:
    """A google.rpc.Status error body; a 429 also names its wait in a RetryInfo detail."""
    status, code_name, default = _ERRORS[kind]
    err: dict[str, Any] = {"code": status, "message": message or default, "status": code_name}
    if kind == "auth_invalid":
        err["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        ]
    elif kind == "rate_limited" and retry_after_s is not None:
        err["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{retry_after_s:g}s",
            }
        ]
    return Rendered(status, json.dumps({"error": err}).encode(), {})


def parse(body: dict[str, Any], path_model: str | None = None) -> ParsedRequest:
    if not path_model:
        raise BadRequest("the model name is missing from the URL")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise BadRequest("* GenerateContentRequest.contents: contents is not specified")
    chars = 0
    for index, content in enumerate(contents):
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            raise BadRequest(f"* GenerateContentRequest.contents[{index}].parts: must be a list")
        chars += text_chars(content["parts"], f"contents[{index}].parts")
    system = body.get("systemInstruction") or body.get("system_instruction")
    system_chars = 0
    if system is not None:
        if not isinstance(system, dict):
            raise BadRequest("systemInstruction must be an object")
        system_chars = text_chars(system.get("parts"), "systemInstruction.parts")
    carried = carried_parts.gemini(body, system_chars)
    config = body.get("generationConfig") or {}
    if not isinstance(config, dict):
        raise BadRequest("generationConfig must be an object")
    limit = optional_limit(config, "maxOutputTokens")
    return ParsedRequest(path_model, chars, limit, True, *astuple_carried(carried))


class Encoder(EncoderBase):
    __slots__ = ("_sent", "_text_close", "_thought_close", "_tail")

    def _setup(self) -> None:
        self._text_head = _HEAD
        self._sent = 0  # output tokens sent so far: Gemini's usage is a running total
        rest = b'}],"role": "model"},"index": 0}]'
        if self._usage:
            rest += b',"usageMetadata": {"promptTokenCount": ' + str(self._prompt_tokens).encode()
            rest += b',"totalTokenCount": '
        self._text_close = b'"' + rest
        self._thought_close = b'","thought": true' + rest
        self._tail = (
            b',"modelVersion": '
            + json.dumps(self._model).encode()
            + b',"responseId": "'
            + self._rid.encode()
            + b'"}'
            + self.nl
            + self.nl
        )

    def delta(self, text: bytes, reasoning: bool, tokens: int) -> bytes:
        self._sent += tokens
        close = self._thought_close if reasoning else self._text_close
        if self._usage:
            running = str(self._prompt_tokens + self._sent).encode()
            return _HEAD + text + close + running + b"}" + self._tail
        return _HEAD + text + close + self._tail

    def finish(self, *, truncated: bool, output_tokens: int, reasoning_tokens: int) -> bytes:
        reason = b'"MAX_TOKENS"' if truncated else b'"STOP"'
        body = (
            b'data: {"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},'
            b'"finishReason": ' + reason + b',"index": 0}]'
        )
        if self._usage:
            usage: dict[str, Any] = {
                "promptTokenCount": self._prompt_tokens,
                "candidatesTokenCount": output_tokens - reasoning_tokens,
                "totalTokenCount": self._prompt_tokens + output_tokens,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": self._prompt_tokens}],
            }
            if reasoning_tokens:
                usage["thoughtsTokenCount"] = reasoning_tokens
            body += b',"usageMetadata": ' + json.dumps(usage).encode()
        return body + self._tail

    def error_event(self) -> bytes:
        status, code_name, message = _ERRORS["server_error"]
        err = {"code": status, "message": message, "status": code_name}
        return b"data: " + json.dumps({"error": err}).encode() + self.nl + self.nl
