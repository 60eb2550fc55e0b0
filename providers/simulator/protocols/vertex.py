"""Google Vertex AI (docs/protocols.md §11): Gemini and Anthropic's models at Vertex's publisher
paths, answering only bearer tokens issued by the simulator's OAuth2 endpoint.

Auth failures come back the Google Cloud way whatever the model: 401 UNAUTHENTICATED.
"""

from __future__ import annotations

import json
from typing import Any

from . import anthropic_messages, gemini
from .common import BadRequest, ParsedRequest, Rendered

ANTHROPIC_VERSION = "vertex-2023-10-16"
# What AnthropicVertex sends today (the SDK's ANTHROPIC_API_VERSION) besides Vertex's own name.
ANTHROPIC_VERSIONS = (ANTHROPIC_VERSION, "2026-10-21")
_AUTH_KINDS = ("auth_missing", "auth_invalid", "auth_expired")
_AUTH_MESSAGE = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential."
)


def google_auth_error(kind: str, request_id: str) -> Rendered:
    err = {"code": 401, "message": _AUTH_MESSAGE, "status": "UNAUTHENTICATED"}
    if kind == "auth_expired":
        err["details"] = [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_EXPIRED"}
        ]
    return Rendered(401, json.dumps({"error": err}).encode(), {"x-request-id": request_id})


class Gemini:
    NAME = "vertex_gemini"
    AUTH = "google"
    NL = gemini.NL
    ALT_SSE = True
    Encoder = gemini.Encoder
    parse = staticmethod(gemini.parse)

    @staticmethod
    def error(
        kind: str, message: str | None, *, request_id: str, retry_after_s: float | None = None
    ) -> Rendered:
        if kind in _AUTH_KINDS:
            return google_auth_error(kind, request_id)
        return gemini.error(kind, message, request_id=request_id, retry_after_s=retry_after_s)


class Anthropic:
    NAME = "vertex_anthropic"
    AUTH = "google"
    Encoder = anthropic_messages.Encoder

    @staticmethod
    def parse(body: dict[str, Any], path_model: str | None = None) -> ParsedRequest:
        if body.get("anthropic_version") not in ANTHROPIC_VERSIONS:
            known = " or ".join(repr(v) for v in ANTHROPIC_VERSIONS)
            raise BadRequest(f"anthropic_version: must be {known} on Vertex AI")
        if "model" in body:
            raise BadRequest("model: Extra inputs are not permitted (the model is in the URL)")
        return anthropic_messages.parse({**body, "model": path_model})

    @staticmethod
    def error(
        kind: str, message: str | None, *, request_id: str, retry_after_s: float | None = None
    ) -> Rendered:
        if kind in _AUTH_KINDS:
            return google_auth_error(kind, request_id)
        return anthropic_messages.error(
            kind, message, request_id=request_id, retry_after_s=retry_after_s
        )
