"""Azure OpenAI (PROTOCOLS.md §10): OpenAI Chat and Responses at Azure's paths, Azure's auth and
its content-filter annotations.

Auth: the `api-key` header (the simulator's key), or a bearer token issued by its managed
identity endpoint (Entra ID). The Chat stream opens with Azure's prompt-filter chunk (empty
`choices`, `prompt_filter_results`) and every content chunk carries `content_filter_results`.
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


class Encoder(openai_chat.Encoder):
    __slots__ = ()

    def _setup(self) -> None:
        super()._setup()
        filters = b',"content_filter_results":' + dumps(FILTER_RESULTS)
        self._tail = filters + self._tail
        self._text_head = self._head + b'{"content":"'
        self._reason_head = self._head + b'{"reasoning_content":"'
        self._delta_tail = b'"}' + self._tail

    def start(self) -> bytes:
        return b"data: " + PROMPT_FILTER_CHUNK + self.nl + self.nl


class Responses:
    """The v1 surface's Responses API: OpenAI's stream, Azure's auth."""

    NAME = "azure_openai_responses"
    AUTH = AUTH
    Encoder = openai_responses.Encoder
    parse = staticmethod(openai_responses.parse)
    error = staticmethod(error)
