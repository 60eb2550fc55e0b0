"""OpenAI Responses API (docs/protocols.md §3): `event:` + data with sequence_number; ends with
`response.completed` (or `response.incomplete` when max_output_tokens cut the reply)."""

from __future__ import annotations

import json
from typing import Any

from . import carried as carried_parts
from .carried import astuple_carried
from .common import (
    BadRequest,
    EncoderBase,
    ParsedRequest,
    dumps,
    optional_limit,
    require_model,
    require_stream,
    sse,
    text_chars,
)
from .openai_chat import openai_error

NAME = "openai_responses"
error = openai_error


def parse(body: dict[str, Any], path_model: str | None = None) -> ParsedRequest:
    model = require_model(body)
    given = body.get("input")
    if isinstance(given, str):
        chars = len(given)
    elif isinstance(given, list) and given:
        chars = 0
        for index, item in enumerate(given):
            if not isinstance(item, dict):
                raise BadRequest(f"input[{index}] must be an object")
            chars += text_chars(item.get("content"), f"input[{index}].content")
    else:
        raise BadRequest("input must be a string or a non-empty array of input items")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise BadRequest("instructions must be a string")
    carried = carried_parts.openai_responses(body, len(instructions or ""))
    require_stream(body)
    limit = optional_limit(body, "max_output_tokens")
    return ParsedRequest(model, chars, limit, True, *astuple_carried(carried))


def _unescape(escaped: list[bytes]) -> str:
    """The text of pre-escaped JSON string pieces."""
    return json.loads(b'"' + b"".join(escaped) + b'"')


class Encoder(EncoderBase):
    __slots__ = (
        "_seq",
        "_reasoning",
        "_answer",
        "_output",
        "_reason_head",
        "_text_mid",
        "_reason_mid",
    )

    def _setup(self) -> None:
        nl = self.nl
        self._seq = 0
        self._reasoning: list[bytes] = []
        self._answer: list[bytes] = []
        self._output: list[dict[str, Any]] = []  # finished output items
        rid = self._rid.encode()
        self._text_head = (
            b"event: response.output_text.delta"
            + nl
            + b'data: {"type":"response.output_text.delta"'
            b',"content_index":0,"delta":"'
        )
        self._reason_head = (
            b"event: response.reasoning_summary_text.delta"
            + nl
            + b'data: {"type":"response.reasoning_summary_text.delta","item_id":"rs_'
            + rid
            + b'","output_index":0,"summary_index":0,"delta":"'
        )
        self._reason_mid = b'","sequence_number":'
        self._text_mid = b""  # set when the message item opens (its output_index is known then)

    def _event(self, type_: str, payload: dict[str, Any]) -> bytes:
        data = {"type": type_, **payload, "sequence_number": self._seq}
        self._seq += 1
        return sse(dumps(data), self.nl, type_.encode())

    def _response(self, status: str) -> dict[str, Any]:
        response = {
            "id": f"resp_{self._rid}",
            "object": "response",
            "created_at": self._created,
            "status": status,
            "model": self._model,
            "output": list(self._output),
            "usage": None,
        }
        if self._tier:
            response["service_tier"] = self._tier
        return response

    def start(self) -> bytes:
        return self._event("response.created", {"response": self._response("in_progress")}) + (
            self._event("response.in_progress", {"response": self._response("in_progress")})
        )

    def begin(self, *, reasoning: bool, first: bool) -> bytes:
        index = len(self._output)
        if reasoning:
            item = {"id": f"rs_{self._rid}", "type": "reasoning", "summary": []}
            part = {"type": "summary_text", "text": ""}
            return self._event(
                "response.output_item.added", {"output_index": index, "item": item}
            ) + self._event(
                "response.reasoning_summary_part.added",
                {"item_id": item["id"], "output_index": index, "summary_index": 0, "part": part},
            )
        item_id = f"msg_{self._rid}"
        self._text_mid = (
            f'","item_id":"{item_id}","logprobs":[],"output_index":{index},"sequence_number":'
        ).encode()
        item = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        return self._event(
            "response.output_item.added", {"output_index": index, "item": item}
        ) + self._event(
            "response.content_part.added",
            {"content_index": 0, "item_id": item_id, "output_index": index, "part": part},
        )

    def delta(self, text: bytes, reasoning: bool, tokens: int) -> bytes:
        seq = self._seq
        self._seq = seq + 1
        if reasoning:
            self._reasoning.append(text)
            head, mid = self._reason_head, self._reason_mid
        else:
            self._answer.append(text)
            head, mid = self._text_head, self._text_mid
        return head + text + mid + str(seq).encode() + b"}" + self.nl + self.nl

    def end(self, *, reasoning: bool) -> bytes:
        index = len(self._output)
        if reasoning:
            text = _unescape(self._reasoning)
            item_id = f"rs_{self._rid}"
            part = {"type": "summary_text", "text": text}
            item = {"id": item_id, "type": "reasoning", "summary": [part]}
            self._output.append(item)
            common = {"item_id": item_id, "output_index": index, "summary_index": 0}
            return (
                self._event("response.reasoning_summary_text.done", {**common, "text": text})
                + self._event("response.reasoning_summary_part.done", {**common, "part": part})
                + self._event("response.output_item.done", {"output_index": index, "item": item})
            )
        text = _unescape(self._answer)
        item_id = f"msg_{self._rid}"
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
        item = {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "content": [part],
            "role": "assistant",
        }
        self._output.append(item)
        common = {"content_index": 0, "item_id": item_id, "output_index": index}
        return (
            self._event("response.output_text.done", {**common, "logprobs": [], "text": text})
            + self._event("response.content_part.done", {**common, "part": part})
            + self._event("response.output_item.done", {"output_index": index, "item": item})
        )

    def finish(self, *, truncated: bool, output_tokens: int, reasoning_tokens: int) -> bytes:
        response = self._response("incomplete" if truncated else "completed")
        if truncated:
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        if self._usage:
            response["usage"] = {
                "input_tokens": self._prompt_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": self._prompt_tokens + output_tokens,
            }
        kind = "response.incomplete" if truncated else "response.completed"
        return self._event(kind, {"response": response})

    def error_event(self) -> bytes:
        return self._event(
            "error",
            {
                "code": "server_error",
                "message": "The server had an error while processing your request.",
                "param": None,
            },
        )
