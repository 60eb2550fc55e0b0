"""The simulator's aiohttp application: four protocols on their usual paths plus /_sim/ routes.

Everything it serves carries `x-tokspeed-simulated: true`; every model response also carries
`x-sim-request-id`, the key of its truth record (GET /_sim/requests/{id}).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import time
from collections.abc import Callable
from time import perf_counter_ns
from types import ModuleType
from typing import Any

from aiohttp import web

from .faults import HTTP_ERROR_FAULTS
from .plan import make_plan
from .profiles import BadModelOption, UnknownModel, parse_fault, parse_model
from .protocols import PROTOCOLS, gemini
from .protocols.common import BadRequest, Rendered
from .sim_routes import add_sim_routes
from .stream import SimStream, Simulation
from .truth import KIND, TruthRecord, TruthStore

SIMULATED_HEADER = ("x-tokspeed-simulated", "true")
NOT_SSE_BODY = (
    b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>"
    b"<h1>502 Bad Gateway</h1><p>tokspeed simulator: a simulated proxy page (fault not_sse)"
    b"</p></body></html>"
)

SIM = web.AppKey("sim", Simulation)
TRUTH = web.AppKey("truth", TruthStore)
API_KEY = web.AppKey("api_key", str)


def _presented_key(request: web.Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    for header in ("x-api-key", "x-goog-api-key"):
        if header in request.headers:
            return request.headers[header]
    return request.query.get("key")


def _auth_error(request: web.Request) -> str | None:
    expected = request.app[API_KEY]
    if not expected:
        return None
    presented = _presented_key(request)
    if presented is None:
        return "auth_missing"
    if not hmac.compare_digest(presented.encode(), expected.encode()):
        return "auth_invalid"
    return None


async def _send(
    request: web.Request, record: TruthRecord, response: web.Response, kind: str, outcome: str
) -> web.Response:
    """Send a complete (non-streamed) response, recording when it was handed to the socket."""
    response.headers["x-sim-request-id"] = record.request_id
    record.status = response.status
    record.outcome = outcome
    t_ns = perf_counter_ns()
    await response.prepare(request)  # headers and body go out together in write_eof
    await response.write_eof()
    record.headers_ns = record.end_ns = t_ns
    record.add(t_ns, KIND[kind])
    return response


def _error_response(rendered: Rendered, *, retry_after_s: float | None) -> web.Response:
    response = web.Response(
        status=rendered.status, body=rendered.body, content_type="application/json"
    )
    response.headers.update(rendered.headers)
    if retry_after_s is not None:
        response.headers["retry-after"] = f"{retry_after_s:g}"
    return response


def _render(proto: ModuleType, kind: str, message: str | None, rid: str, retry: float | None):
    if proto is gemini:
        return gemini.error(kind, message, request_id=rid, retry_after_s=retry)
    return proto.error(kind, message, request_id=rid)


def protocol_handler(proto: ModuleType) -> Callable[[web.Request], Any]:
    async def handle(request: web.Request) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        start = loop.time()
        record = TruthRecord(os.urandom(8).hex(), proto.NAME, perf_counter_ns())
        request.app[TRUTH].add(record)
        rid = record.request_id

        async def fail(kind: str, message: str | None = None, retry: float | None = None):
            rendered = _render(proto, kind, message, rid, retry)
            return await _send(
                request,
                record,
                _error_response(rendered, retry_after_s=retry),
                "error",
                "http_error",
            )

        auth = _auth_error(request)
        if auth:
            return await fail(auth)
        path_model = request.match_info.get("model")
        try:
            if proto is gemini and request.query.get("alt") != "sse":
                raise BadRequest("this simulator only serves alt=sse streams")
            if proto.NAME == "anthropic_messages" and "anthropic-version" not in request.headers:
                raise BadRequest("anthropic-version: header is required")
            try:
                body = json.loads(await request.read())
            except (ValueError, UnicodeDecodeError):
                raise BadRequest("the request body is not valid JSON") from None
            if not isinstance(body, dict):
                raise BadRequest("the request body must be a JSON object")
            parsed = proto.parse(body, path_model)
            record.model = parsed.model
            profile, options = parse_model(parsed.model)
            fault = options.fault
            if "x-sim-fault" in request.headers:
                fault = parse_fault(request.headers["x-sim-fault"])
        except BadRequest as exc:
            return await fail("bad_request", str(exc))
        except BadModelOption as exc:
            return await fail("bad_request", str(exc))
        except UnknownModel as exc:
            return await fail("not_found", f"The model `{exc}` does not exist.")
        record.fault = fault
        if fault in HTTP_ERROR_FAULTS:
            kind = HTTP_ERROR_FAULTS[fault]
            return await fail(kind, retry=options.retry_after_s if kind == "rate_limited" else None)
        if fault == "not_sse":
            page = web.Response(status=200, body=NOT_SSE_BODY, content_type="text/html")
            return await _send(request, record, page, "body", "not_sse")

        sim = request.app[SIM]
        plan = make_plan(profile, options, parsed, fault=fault, controls=sim.controls)
        record.prompt_tokens = plan.prompt_tokens
        nl = gemini.NL if proto is gemini or fault == "comments" else b"\n"
        include_usage = parsed.include_usage and fault != "no_usage"
        encoder = proto.Encoder(
            request_id=rid,
            model=parsed.model,
            created=int(time.time()),
            prompt_tokens=plan.prompt_tokens,
            include_usage=include_usage,
            nl=nl,
        )
        response = web.StreamResponse(
            status=200,
            headers={
                "content-type": "text/event-stream; charset=utf-8",
                "cache-control": "no-cache",
                "x-sim-request-id": rid,
            },
        )
        response.enable_chunked_encoding()
        record.status = 200
        record.headers_ns = perf_counter_ns()
        await response.prepare(request)  # StreamResponse sends its headers immediately
        if request.transport is None or request.transport.is_closing():
            record.outcome = "client_closed"
            return response
        stream = SimStream(
            sim=sim,
            plan=plan,
            encoder=encoder,
            transport=request.transport,
            record=record,
            start=start,
            comments=fault == "comments",
        )
        stream.begin()
        try:
            result = await stream.done
        finally:
            stream.cancel()
        if result is None:
            return response
        kind, tail = result
        if kind == "error":
            response.force_close()  # as real providers do after a mid-stream error event
        t_ns = perf_counter_ns()
        await response.write_eof(tail)  # last events and the chunked terminator in one write
        record.add(t_ns, KIND[kind])
        record.end_ns = t_ns
        record.finish_reason = "length" if plan.truncated else "stop"
        record.outcome = "complete" if kind == "end" else "error_event"
        return response

    return handle


async def _mark_simulated(request: web.Request, response: web.StreamResponse) -> None:
    response.headers[SIMULATED_HEADER[0]] = SIMULATED_HEADER[1]


def build_app(*, api_key: str | None = None) -> web.Application:
    """The simulator application; `api_key` None or "" accepts any key."""
    app = web.Application(client_max_size=16 * 1024 * 1024)
    app[SIM] = Simulation()
    app[TRUTH] = TruthStore()
    app[API_KEY] = api_key or ""
    app.on_response_prepare.append(_mark_simulated)
    app.router.add_post("/v1/chat/completions", protocol_handler(PROTOCOLS["openai_chat"]))
    app.router.add_post("/v1/responses", protocol_handler(PROTOCOLS["openai_responses"]))
    app.router.add_post("/v1/messages", protocol_handler(PROTOCOLS["anthropic_messages"]))
    app.router.add_post("/v1beta/models/{model}:streamGenerateContent", protocol_handler(gemini))
    add_sim_routes(app, sim_key=SIM, truth_key=TRUTH)
    return app
