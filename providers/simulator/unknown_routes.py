"""Unknown routes answered the way the provider whose path it looks like would: a JSON error a
client's SDK can read and show, naming the method and path, instead of aiohttp's plain text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from .protocols import anthropic_messages, bedrock, gemini
from .protocols.common import Rendered, dumps

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_GOOGLE_PREFIXES = ("/v1beta/", "/v1beta1/", "/v1/models/", "/v1/projects/", "/v1/publishers/")


def _render(request: web.Request, status: int) -> Rendered:
    path = request.path
    message = f"Invalid URL ({request.method} {path}): this simulator has no such route"
    if status == 405:
        message = f"Method {request.method} is not allowed on {path}"
    rid = "unknown-route"
    if path.startswith(_GOOGLE_PREFIXES):
        rendered = gemini.error("not_found", message, request_id=rid)
    elif path.startswith("/model/"):
        rendered = bedrock.error("not_found", message, request_id=rid)
    elif path.startswith("/openai/"):
        rendered = Rendered(404, dumps({"error": {"code": "404", "message": message}}), {})
    elif "anthropic-version" in request.headers:
        rendered = anthropic_messages.error("not_found", message, request_id=rid)
    else:
        body = {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        }
        rendered = Rendered(404, dumps(body), {})
    return Rendered(status, rendered.body, rendered.headers)


@web.middleware
async def provider_shaped_not_found(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except (web.HTTPNotFound, web.HTTPMethodNotAllowed) as exc:
        rendered = _render(request, exc.status)
        response = web.Response(
            status=rendered.status, body=rendered.body, content_type="application/json"
        )
        response.headers.update(rendered.headers)
        return response
