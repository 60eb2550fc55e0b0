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
from dataclasses import replace
from time import perf_counter_ns
from types import ModuleType
from typing import Any

from aiohttp import web

from . import lanes as sim_lanes
from .cloud_auth import TOKENS, add_auth_routes, bearer, verify_sigv4
from .faults import HTTP_ERROR_FAULTS, PROTOCOL_FAULTS
from .plan import Plan, make_plan
from .profiles import BadModelOption, Options, Profile, UnknownModel, parse_fault, parse_model
from .protocols import PROTOCOLS, azure_openai, bedrock, gemini, vertex
from .protocols.common import BadRequest, Encoder, ParsedRequest
from .sim_routes import add_sim_routes
from .stream import SimStream, Simulation
from .truth import KIND, TruthRecord, TruthStore
from .unknown_routes import provider_shaped_not_found

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


async def _cloud_auth_error(request: web.Request, proto: Any) -> str | None:
    """Check the credential the protocol's face expects (see cloud_auth.py)."""
    mode = getattr(proto, "AUTH", "key")
    if mode == "key":
        return _auth_error(request)
    token = bearer(request)
    if mode == "sigv4":
        if token is not None:  # a Bedrock API key
            return _auth_error(request)
        return verify_sigv4(request, await request.read())
    if mode == "azure" and "api-key" in request.headers:
        expected = request.app[API_KEY]
        presented = request.headers["api-key"].encode()
        return (
            None
            if not expected or hmac.compare_digest(presented, expected.encode())
            else ("auth_invalid")
        )
    if mode == "azure" and token is not None and token not in request.app[TOKENS].tokens:
        if request.path.startswith("/openai/v1/"):
            return _auth_error(request)  # the v1 surface takes the key as a bearer token too
    if mode == "google" and token is None and "x-goog-api-key" in request.headers:
        return _auth_error(request)  # Vertex express mode: an API key
    if token is None:
        return "auth_missing"
    return request.app[TOKENS].check(token)


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


class Refused(Exception):
    """The request gets an HTTP error in its protocol's shape instead of a stream."""

    def __init__(self, kind: str, message: str | None = None, retry_after_s: float | None = None):
        super().__init__(kind)
        self.kind = kind
        self.message = message
        self.retry_after_s = retry_after_s


async def _accept(
    request: web.Request, proto: Any, record: TruthRecord
) -> tuple[ParsedRequest, Profile, Options, str]:
    """Authenticate and validate a request; raise Refused with the error it deserves."""
    auth = await _cloud_auth_error(request, proto)
    if auth:
        raise Refused(auth)
    try:
        if getattr(proto, "ALT_SSE", proto is gemini) and request.query.get("alt") != "sse":
            raise BadRequest("this simulator only serves alt=sse streams")
        if proto.NAME == "azure_openai" and "model" in request.match_info:
            if "api-version" not in request.query:
                raise BadRequest("api-version query parameter is required for deployment URLs")
        if proto.NAME == "anthropic_messages" and "anthropic-version" not in request.headers:
            raise BadRequest("anthropic-version: header is required")
        try:
            body = json.loads(await request.read())
        except (ValueError, UnicodeDecodeError):
            raise BadRequest("the request body is not valid JSON") from None
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object")
        parsed = proto.parse(body, request.match_info.get("model"))
        record.model = parsed.model
        profile, options = parse_model(parsed.model)
        lane = request.app[SIM].quota.serve(
            parsed.model, sim_lanes.asked(proto.NAME, body), options.quota
        )
        parsed = replace(parsed, lane=lane)
        fault = options.fault
        if "x-sim-fault" in request.headers:
            fault = parse_fault(request.headers["x-sim-fault"])
        if fault in PROTOCOL_FAULTS and proto.NAME not in PROTOCOL_FAULTS[fault]:
            speakers = ", ".join(sorted(PROTOCOL_FAULTS[fault]))
            raise BadRequest(f"fault {fault} is only simulated for {speakers}")
    except (BadRequest, BadModelOption) as exc:
        raise Refused("bad_request", str(exc)) from None
    except UnknownModel as exc:
        raise Refused("not_found", f"The model `{exc}` does not exist.") from None
    record.fault = fault
    if fault in HTTP_ERROR_FAULTS:
        kind = HTTP_ERROR_FAULTS[fault]
        raise Refused(kind, retry_after_s=options.retry_after_s if kind == "rate_limited" else None)
    return parsed, profile, options, fault


def _refusal(proto: Any, refused: Refused, request_id: str) -> web.Response:
    rendered = proto.error(
        refused.kind, refused.message, request_id=request_id, retry_after_s=refused.retry_after_s
    )
    response = web.Response(
        status=rendered.status, body=rendered.body, content_type="application/json"
    )
    response.headers.update(rendered.headers)
    if refused.retry_after_s is not None:
        response.headers["retry-after"] = f"{refused.retry_after_s:g}"
    return response


def protocol_handler(proto: ModuleType | type) -> Callable[[web.Request], Any]:
    async def handle(request: web.Request) -> web.StreamResponse:
        start = asyncio.get_running_loop().time()  # TTFT counts from here
        record = TruthRecord(os.urandom(8).hex(), proto.NAME, perf_counter_ns())
        request.app[TRUTH].add(record)
        try:
            parsed, profile, options, fault = await _accept(request, proto, record)
        except Refused as refused:
            response = _refusal(proto, refused, record.request_id)
            return await _send(request, record, response, "error", "http_error")
        if fault == "not_sse":
            page = web.Response(status=200, body=NOT_SSE_BODY, content_type="text/html")
            return await _send(request, record, page, "body", "not_sse")
        sim = request.app[SIM]
        plan = make_plan(profile, options, parsed, fault=fault, controls=sim.controls)
        record.prompt_tokens = plan.prompt_tokens
        record.user_chars = parsed.prompt_chars
        record.system_chars = parsed.system_chars
        record.tool_names = parsed.tool_names
        record.lane = parsed.lane
        encoder = proto.Encoder(
            request_id=record.request_id,
            model=parsed.model,
            created=int(time.time()),
            prompt_tokens=plan.prompt_tokens,
            include_usage=parsed.include_usage and fault != "no_usage",
            served_tier=sim_lanes.says(proto.NAME, parsed.lane),
            nl=getattr(proto, "NL", gemini.NL if proto is gemini else None)
            or (gemini.NL if fault == "comments" else b"\n"),
        )
        if fault == "async_filter":
            encoder.filter_async()
        content_type = getattr(proto, "CONTENT_TYPE", "text/event-stream; charset=utf-8")
        return await _stream(
            request, record, sim, plan, encoder, start=start, content_type=content_type
        )

    return handle


async def _stream(
    request: web.Request,
    record: TruthRecord,
    sim: Simulation,
    plan: Plan,
    encoder: Encoder,
    *,
    start: float,
    content_type: str,
) -> web.StreamResponse:
    response = web.StreamResponse(
        status=200,
        headers={
            "content-type": content_type,
            "cache-control": "no-cache",
            "x-sim-request-id": record.request_id,
        },
    )
    response.enable_chunked_encoding()
    record.status = 200
    record.headers_ns = perf_counter_ns()
    await response.prepare(request)  # a StreamResponse sends its headers at once
    transport = request.transport
    if transport is None or transport.is_closing():
        record.outcome = "client_closed"
        return response
    stream = SimStream(
        sim=sim,
        plan=plan,
        encoder=encoder,
        transport=transport,
        record=record,
        start=start,
        comments=plan.fault == "comments",
    )
    stream.begin()
    try:
        result = await stream.done
    finally:
        stream.cancel()  # no-op unless this handler was cancelled (the client went away)
    if result is None:  # dropped on purpose, or the client went away
        return response
    kind, tail = result
    if kind == "error":
        response.force_close()  # real providers close the connection after an error event
    t_ns = perf_counter_ns()
    await response.write_eof(tail)  # the last events and the chunked terminator, one write
    record.add(t_ns, KIND[kind])
    record.end_ns = t_ns
    if kind == "end":
        if plan.fault == "content_filter":
            record.finish_reason = "content_filter"
        else:
            record.finish_reason = "length" if plan.truncated else "stop"
        record.outcome = "complete"
    else:
        record.outcome = "error_event"
    return response


async def _mark_simulated(request: web.Request, response: web.StreamResponse) -> None:
    response.headers[SIMULATED_HEADER[0]] = SIMULATED_HEADER[1]


def build_app(*, api_key: str | None = None) -> web.Application:
    """The simulator application; `api_key` None or "" accepts any key."""
    app = web.Application(client_max_size=16 * 1024 * 1024, middlewares=[provider_shaped_not_found])
    app[SIM] = Simulation()
    app[TRUTH] = TruthStore()
    app[API_KEY] = api_key or ""
    app.on_response_prepare.append(_mark_simulated)
    app.router.add_post("/v1/chat/completions", protocol_handler(PROTOCOLS["openai_chat"]))
    app.router.add_post("/v1/responses", protocol_handler(PROTOCOLS["openai_responses"]))
    app.router.add_post("/v1/messages", protocol_handler(PROTOCOLS["anthropic_messages"]))
    # The Gemini API at /v1beta and at /v1 (google-genai's newer default).
    app.router.add_post(
        "/{version:v1beta|v1}/models/{model}:streamGenerateContent", protocol_handler(gemini)
    )
    # The cloud faces (docs/protocols.md §9–§11): Bedrock, Azure OpenAI, Vertex AI.
    app.router.add_post("/model/{model:.+}/converse-stream", protocol_handler(bedrock))
    azure_chat = protocol_handler(azure_openai)
    app.router.add_post("/openai/deployments/{model}/chat/completions", azure_chat)
    app.router.add_post("/openai/v1/chat/completions", azure_chat)
    app.router.add_post("/openai/v1/responses", protocol_handler(azure_openai.Responses))
    # Vertex at v1 and v1beta1 (google-genai's default), and express mode's project-less paths.
    vertex_gemini = protocol_handler(vertex.Gemini)
    for publishers in (
        "/{version:v1|v1beta1}/projects/{project}/locations/{location}/publishers",
        "/{version:v1|v1beta1}/publishers",
    ):
        app.router.add_post(
            publishers + "/google/models/{model}:streamGenerateContent", vertex_gemini
        )
        app.router.add_post(
            publishers + "/anthropic/models/{model}:streamRawPredict",
            protocol_handler(vertex.Anthropic),
        )
    add_auth_routes(app)
    add_sim_routes(app, sim_key=SIM, truth_key=TRUTH)
    return app
