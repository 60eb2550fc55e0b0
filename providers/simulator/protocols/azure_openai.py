"""Azure OpenAI (docs/protocols.md §10): OpenAI Chat and Responses at Azure's paths, Azure's
auth and its content-filter annotations.

Auth: the `api-key` header (the simulator's key), or a bearer token issued by its managed
identity endpoint (Entra ID). The Chat stream opens with Azure's prompt-filter chunk (empty
`choices`, `prompt_filter_results`) and every content chunk carries `content_filter_results`;
the `content_filter` and `async_filter` faults give Azure's filter stop and its asynchronous
filter mode.
"""

from __future__ import annotations

from typing import Any

from . import openai_chat, openai_responses
from .common import BadRequest, ParsedRequest, Rendered, dumps

NAME = "azure_openai"
AUTH = "azure"

_SAFE = {"filtered": False, "severity": "safe"}
FILTER_RESULTS = {"hate": _SAFE, "self_harm": _SAFE, "sexual": _SAFE, "violence": _SAFE}
PROMPT_FILTER_CHUNK = dumps(
    {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": FILTER_RESULTS}],
    }
)
_AUTH_MESSAGE = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a "
    "valid key for an active subscription and use a correct regional API endpoint for your "
    "resource."
)


def error(
    kind: str, message: str | None, *, request_id: str, retry_after_s: float | None = None
) -> Rendered:
    if kind in ("auth_missing", "auth_invalid", "auth_expired"):
        if kind == "auth_expired":
            message = (
                "Unauthorized. Access token is missing, invalid, audience is incorrect or have "
                "expired."
            )
        body = {"error": {"code": "401", "message": message or _AUTH_MESSAGE}}
        return Rendered(401, dumps(body), {"apim-request-id": request_id})
    return openai_chat.error(kind, message, request_id=request_id, retry_after_s=retry_after_s)


def parse(body: dict[str, Any], path_model: str | None = None) -> ParsedRequest:
    """A deployment URL names the model; the v1 surface takes it from the body."""
    if path_model:
        if "model" not in body:
            body = {**body, "model": path_model}
    elif not body.get("model"):
        raise BadRequest("model is required on the v1 surface")
    return openai_chat.parse(body)


# The verdict that stops a reply (`content_filter` fault): one category flagged.
FLAGGED_RESULTS = {**FILTER_RESULTS, "violence": {"filtered": True, "severity": "medium"}}
_FILTERS_FIELD = b',"content_filter_results":' + dumps(FILTER_RESULTS)
# Asynchronous filter mode: an annotation of the text so far before every ANNOTATE_EVERY-th chunk.
ANNOTATE_EVERY = 3
_ANNOTATION_HEAD = b'data: {"choices":[{"content_filter_offsets":{"check_offset":'
_ANNOTATION_TAIL = (
    b"}," + _FILTERS_FIELD[1:] + b',"finish_reason":null,"index":0}],'
    b'"created":0,"id":"","model":"","object":""}'
)


class Encoder(openai_chat.Encoder):
    """Azure's chunks: OpenAI Chat's, with filter results on each, after the prompt-filter chunk.

    In the asynchronous filter mode (`filter_async()`, the `async_filter` fault) text chunks go
    out without filter results, several tokens at a time, and the filter's verdict on the text
    follows in annotation chunks of their own (no `delta`, `content_filter_offsets` saying which
    characters were checked; offsets count the escaped bytes sent), the last after the stop.
    """

    __slots__ = ("_async", "_chunks", "_sent_chars", "_checked_chars")

    def _setup(self) -> None:
        super()._setup()
        self._async = False
        self._chunks = self._sent_chars = self._checked_chars = 0
        self._tail = _FILTERS_FIELD + self._tail
        self._text_head = self._head + b'{"content":"'
        self._reason_head = self._head + b'{"reasoning_content":"'
        self._delta_tail = b'"}' + self._tail

    def filter_async(self) -> None:
        self._async = True
        self._delta_tail = b'"}' + self._tail[len(_FILTERS_FIELD) :]

    def start(self) -> bytes:
        return b"data: " + PROMPT_FILTER_CHUNK + self.nl + self.nl

    def delta(self, text: bytes, reasoning: bool, tokens: int) -> bytes:
        chunk = super().delta(text, reasoning, tokens)
        if not self._async:
            return chunk
        # The verdict on earlier text arrives while later text streams.
        annotation = (
            self._annotation() if self._chunks % ANNOTATE_EVERY == ANNOTATE_EVERY - 1 else b""
        )
        self._chunks += 1
        self._sent_chars += len(text)
        return annotation + chunk

    def _annotation(self) -> bytes:
        start, end = self._checked_chars, self._sent_chars
        if start == end:
            return b""
        self._checked_chars = end
        offsets = b'%d,"start_offset":%d,"end_offset":%d' % (start, start, end)
        return _ANNOTATION_HEAD + offsets + _ANNOTATION_TAIL + self.nl + self.nl

    def filtered(self, *, output_tokens: int, reasoning_tokens: int) -> bytes:
        stop = self._stop_chunk(
            b'"content_filter"', b',"content_filter_results":' + dumps(FLAGGED_RESULTS)
        )
        return self._close(stop, output_tokens, reasoning_tokens)

    def _close(self, stop: bytes, output_tokens: int, reasoning_tokens: int) -> bytes:
        if self._async:
            stop += self._annotation()  # the verdict on the last text comes after the stop
        return super()._close(stop, output_tokens, reasoning_tokens)


class Responses:
    """The v1 surface's Responses API: OpenAI's stream, Azure's auth."""

    NAME = "azure_openai_responses"
    AUTH = AUTH
    Encoder = openai_responses.Encoder
    parse = staticmethod(openai_responses.parse)
    error = staticmethod(error)
