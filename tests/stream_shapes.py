"""Stream shapes recorded from real providers, and the two ways the shape tests feed them.

`record_split` runs the bytes through the SSE decoder, the adapter and the measurement's Recorder
in two network reads cut at a given byte (every byte is tried by the tests). `measure_served`
serves them from a real HTTP server on loopback, one byte per write with a pause after each event,
and measures them with measure_request over the measuring transport.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from benchmarks.measure import Limits, Measurement, make_client, measure_request
from benchmarks.measure.recorder import Recorder
from providers.base import EndpointConfig
from providers.errors import missing_end_marker
from providers.registry import get_adapter
from providers.sse import SSEDecoder

KEY = "sk-shapes-test-key-0123456789abcdef"
LIMITS = Limits(connect_timeout_s=2, idle_timeout_s=5, deadline_s=30)
EVENT_PAUSE_S = 0.003  # between events: each event arrives in a read of its own
STAMP_STEP_NS = 1_000_000  # offline: read i arrives at i ms


def sse(data: Any, event: str = "") -> bytes:
    body = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {body}\n\n".encode()


def chat(delta: dict[str, Any] | None = None, *, finish: str | None = None, **top: Any) -> bytes:
    body: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", **top}
    if "choices" not in top:
        body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return sse(body)


def usage_chunk(completion: int, reasoning: int | None = None, prompt: int = 9) -> bytes:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return chat(choices=[], usage=usage)


def anthropic(kind: str, **fields: Any) -> bytes:
    return sse({"type": kind, **fields}, kind)


def responses(kind: str, **fields: Any) -> bytes:
    return sse({"type": kind, **fields}, kind)


@dataclass(frozen=True)
class Shape:
    """Bytes a provider sends; `status` and `headers` for an answer that is not a stream."""

    protocol: str
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    event_pause_s: float = EVENT_PAUSE_S

    def events(self) -> list[bytes]:
        """The body cut after each event: one network read per event."""
        return [part + b"\n\n" for part in self.body.split(b"\n\n") if part]


def record_split(shape: Shape, *reads: bytes) -> Measurement:
    """The measurement of `reads` (one network read each, 1 ms apart), as request.py makes it."""
    adapter = get_adapter(shape.protocol)
    recorder = Recorder(adapter, started_at=datetime(2026, 1, 1, tzinfo=UTC), t0_ns=0)
    recorder.http_status = 200
    decoder = SSEDecoder()
    ns = 0
    for ns, read in enumerate(reads, start=1):
        ns *= STAMP_STEP_NS
        for event in decoder.feed(read):
            recorder.on_event(event, ns)
            if recorder.stopped:
                return recorder.result(secrets=(KEY,))
    if adapter.ends_on_close and recorder.finished:
        recorder.end_ns = recorder.last_data_ns
    else:
        recorder.fail_with(missing_end_marker(adapter.name, sum(map(len, reads))), at_ns=ns)
    return recorder.result(secrets=(KEY,))


async def _serve_bytes(shape: Shape, paths: list[str], request: web.Request) -> web.StreamResponse:
    paths.append(request.path_qs)
    if shape.status != 200:
        return web.Response(
            status=shape.status,
            body=shape.body,
            headers={"content-type": "application/json", **shape.headers},
        )
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    body = shape.body
    for i in range(len(body)):
        await response.write(body[i : i + 1])  # every byte its own write
        if body[i : i + 1] == b"\n" and body[i - 1 : i] == b"\n":
            await asyncio.sleep(shape.event_pause_s)
    return response


def measure_served(
    shape: Shape, *, base_path: str = "/v1", limits: Limits = LIMITS
) -> tuple[Measurement, list[str]]:
    """Serve `shape` on loopback and measure it; also returns the paths the client asked for."""
    paths: list[str] = []

    async def main() -> Measurement:
        async def handler(request: web.Request) -> web.StreamResponse:
            return await _serve_bytes(shape, paths, request)

        app = web.Application()
        app.router.add_route("POST", "/{tail:.*}", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001 - aiohttp has no getter
        config = EndpointConfig(
            base_url=f"http://127.0.0.1:{port}{base_path}",
            protocol=shape.protocol,
            model="m-1",
            api_key=KEY,
        )
        try:
            async with make_client(limits=limits, max_connections=1) as client:
                return await measure_request(
                    client, config, prompt="x", max_tokens=64, limits=limits
                )
        finally:
            await runner.cleanup()

    return asyncio.run(main()), paths
