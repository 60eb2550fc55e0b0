"""Measure one streamed request (docs/design.md §4): send, stamp every network read, classify.

Clock discipline: t0 is read just before the request goes to httpx. Every piece of body that
aiter_raw yields carries the time its bytes arrived (`Connection.read_ns`, http/connection.py:
the kernel's receive stamp, or the clock read first thing when the socket became readable), and
each SSE event (or Bedrock event-stream frame) decoded from that piece gets that stamp. Parsing
happens after stamping and never moves the clock. Only a stream whose transport is not ours (a
plain httpx client) falls back to reading the clock as each piece comes out of aiter_raw.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from time import perf_counter_ns
from typing import Any

import httpx

from providers.base import Adapter, Credential, EndpointConfig, ErrorCategory, StreamError
from providers.errors import classify_status, missing_end_marker, not_event_stream, transport_error
from providers.prompt import Prompt
from providers.registry import get_adapter, stream_format
from providers.wire import authorized

from .bounds import malformed_message
from .http.connection import Connection
from .measurement import Limits, Measurement
from .recorder import Recorder

log = logging.getLogger(__name__)

# How much of an error body is read and classified.
_ERROR_BODY_BYTES = 64 * 1024
# After the end marker, how long the rest of the body (e.g. the chunked terminator) may take
# before the connection is dropped instead of being returned to the pool for reuse.
_DRAIN_GRACE_S = 0.25
_SENSITIVE_HEADER_WORDS = ("key", "auth", "token", "secret")


@dataclass(slots=True)
class PreparedRequest:
    """A request built (body encoded) before the clock starts."""

    request: httpx.Request
    adapter: Adapter
    secrets: tuple[str, ...]
    trace: _Trace
    credential: Credential | None = None


class _Trace:
    """httpx "trace" extension: when the TCP connect started and when TCP (+TLS) was ready.

    Our transport emits httpcore's event names, so this works with a plain httpx client too.
    """

    __slots__ = ("recorder",)

    def __init__(self) -> None:
        self.recorder: Recorder | None = None

    async def __call__(self, name: str, info: dict[str, Any]) -> None:
        recorder = self.recorder
        if recorder is None:
            return
        if name == "connection.connect_tcp.started":
            recorder.connect_start_ns = perf_counter_ns()
        elif name in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            recorder.connect_end_ns = perf_counter_ns()


def secrets_of(config: EndpointConfig) -> tuple[str, ...]:
    """Values that must never appear in a stored message: the key and key-like headers."""
    values = [config.api_key or ""]
    for name, value in config.extra_headers.items():
        if any(word in name.lower() for word in _SENSITIVE_HEADER_WORDS):
            values.append(value)
    return tuple(value for value in values if value)


def prepare_request(
    client: httpx.AsyncClient, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
) -> PreparedRequest:
    """Build the protocol's streaming request; raises ValueError for an unknown protocol.

    Cloud credentials sign it or add their token here (a token refresh is network I/O), so
    nothing of that lands inside the measured time.
    """
    adapter = get_adapter(config.protocol)
    spec = authorized(adapter.build_request(config, prompt=prompt, max_tokens=max_tokens), config)
    trace = _Trace()
    body = {"content": spec.content} if spec.content is not None else {"json": spec.json}
    request = client.build_request(
        spec.method, spec.url, headers=spec.headers, extensions={"trace": trace}, **body
    )
    secrets = secrets_of(config) + _auth_values(spec.headers, config)
    return PreparedRequest(request, adapter, secrets, trace, config.credential)


def _auth_values(headers: dict[str, str], config: EndpointConfig) -> tuple[str, ...]:
    """A credential's token or signature must never reach a stored message either."""
    if config.credential is None:
        return ()
    value = headers.get("authorization", "")
    return (value, value.removeprefix("Bearer ")) if value else ()


async def measure_request(
    client: httpx.AsyncClient,
    config: EndpointConfig,
    *,
    prompt: str | Prompt,
    max_tokens: int,
    limits: Limits,
) -> Measurement:
    """Stream one request and measure it. Provider and transport errors become the sample's
    error_category (with every timing taken before the error); they are never raised."""
    prepared = prepare_request(client, config, prompt=prompt, max_tokens=max_tokens)
    return await execute(client, prepared, limits=limits)


class _Watchdog:
    """Data-idle timer and wall-clock deadline, checked lazily: per event the stream only
    updates `recorder.last_data_ns`; the timer wakes up when the earliest limit could be due."""

    __slots__ = ("scope", "recorder", "idle_ns", "deadline_at_ns", "reason", "handle", "loop")

    def __init__(self, scope: asyncio.Timeout, recorder: Recorder, limits: Limits) -> None:
        self.scope = scope
        self.recorder = recorder
        self.idle_ns = int(limits.idle_timeout_s * 1e9)
        self.deadline_at_ns = recorder.t0_ns + int(limits.deadline_s * 1e9)
        self.reason = ""
        self.loop = asyncio.get_running_loop()
        self.handle = self.loop.call_later(min(limits.idle_timeout_s, limits.deadline_s), self)

    def __call__(self) -> None:
        now = perf_counter_ns()
        idle_due = self.recorder.last_data_ns + self.idle_ns
        due, reason = min((idle_due, "idle"), (self.deadline_at_ns, "deadline"))
        if now >= due:
            self.reason = reason
            self.scope.reschedule(self.loop.time())  # cancels the stream at once
        else:
            self.handle = self.loop.call_later((due - now) / 1e9, self)

    def cancel(self) -> None:
        self.handle.cancel()


async def execute(
    client: httpx.AsyncClient, prepared: PreparedRequest, *, limits: Limits
) -> Measurement:
    """Send a prepared request and measure it (see measure_request)."""
    recorder = Recorder(prepared.adapter, started_at=datetime.now(UTC), t0_ns=0)
    prepared.trace.recorder = recorder
    watchdog: _Watchdog | None = None
    try:
        async with asyncio.timeout(None) as scope:
            # The clock starts here, and the request goes out now.
            recorder.t0_ns = recorder.last_data_ns = perf_counter_ns()
            watchdog = _Watchdog(scope, recorder, limits)
            response = await client.send(prepared.request, stream=True)
            try:
                await _read_response(response, recorder, prepared.adapter, limits)
            finally:
                await response.aclose()
            if response.status_code == 401 and prepared.credential is not None:
                prepared.credential.invalidate()  # expired or revoked: the next one refreshes
    except TimeoutError:
        if not recorder.ended:
            _timed_out(recorder, watchdog.reason if watchdog else "", limits)
    except httpx.HTTPError as exc:
        if not recorder.ended:
            error = transport_error(exc, after_first_token=bool(recorder.ttft_ns))
            recorder.fail_with(error, at_ns=perf_counter_ns())
    except Exception as exc:  # noqa: BLE001 - bytes nobody could read: this sample's error
        recorder.fail(ErrorCategory.STREAM_BROKEN, malformed_message(exc), at_ns=perf_counter_ns())
    finally:
        if watchdog is not None:
            watchdog.cancel()
    return _result(recorder, prepared.secrets)


def _result(recorder: Recorder, secrets: tuple[str, ...]) -> Measurement:
    """The recorder's Measurement; if the provider's bytes defeat even that, a malformed error
    with the timings the stream reached (never an exception that would cost the round)."""
    try:
        return recorder.result(secrets=secrets)
    except Exception as exc:  # noqa: BLE001
        log.warning("stream not understood: %s", type(exc).__name__)
        reader = Recorder(recorder.adapter, started_at=recorder.started_at, t0_ns=recorder.t0_ns)
        reader.connect_start_ns, reader.connect_end_ns = (
            recorder.connect_start_ns,
            recorder.connect_end_ns,
        )
        reader.headers_ns, reader.first_event_ns = recorder.headers_ns, recorder.first_event_ns
        reader.http_status = recorder.http_status
        reader.fail(
            ErrorCategory.STREAM_BROKEN,
            malformed_message(exc),
            at_ns=recorder.end_ns or recorder.last_data_ns,
        )
        return reader.result(secrets=secrets)


def _timed_out(recorder: Recorder, reason: str, limits: Limits) -> None:
    category = ErrorCategory.STREAM_BROKEN if recorder.ttft_ns else ErrorCategory.TIMEOUT
    if reason == "idle":
        message = f"no data event for {limits.idle_timeout_s:g} s (idle timeout)"
    elif reason == "deadline":
        message = f"deadline of {limits.deadline_s:g} s exceeded"
    else:
        message = "timed out"
    recorder.fail(category, message, at_ns=perf_counter_ns())


async def _read_response(
    response: httpx.Response, recorder: Recorder, adapter: Adapter, limits: Limits
) -> None:
    stream = response.extensions.get("network_stream")
    stamped = isinstance(stream, Connection)
    recorder.headers_ns = stream.read_ns if stamped else perf_counter_ns()
    if stamped:
        recorder.connect_address = stream.peer
    if stamped and stream.preopened_connect_ms is not None and not recorder.connect_start_ns:
        # Its connection was opened ahead of the round: report that connect once, outside TTFT.
        recorder.preopened_connect_ms, stream.preopened_connect_ms = (
            stream.preopened_connect_ms,
            None,
        )
    recorder.http_status = response.status_code
    headers = response.headers
    sim_id = headers.get("x-sim-request-id")
    recorder.simulated = sim_id is not None
    recorder.request_id = sim_id or headers.get("x-request-id") or headers.get("request-id") or ""
    chunks = response.aiter_raw()
    if not 200 <= response.status_code < 300:
        body = await _read_some(chunks)
        recorder.end_ns = perf_counter_ns()
        _http_error(recorder, adapter, response, body)
        return
    media_type, new_decoder = stream_format(adapter)
    content_type = headers.get("content-type", "")
    if content_type and media_type not in content_type.lower():
        body = await _read_some(chunks)
        recorder.end_ns = perf_counter_ns()
        recorder.fail_with(not_event_stream(content_type, body), at_ns=recorder.end_ns)
        return

    feed = new_decoder().feed
    on_event = recorder.on_event
    max_bytes = limits.max_bytes
    received = 0
    async for chunk in chunks:
        # The stamp of the network read that delivered this chunk; nothing happens before it.
        ns = stream.read_ns if stamped else perf_counter_ns()
        received += len(chunk)
        if received > max_bytes:
            recorder.fail(
                ErrorCategory.STREAM_BROKEN,
                f"response larger than the cap of {max_bytes} bytes",
                at_ns=ns,
            )
            return
        for event in feed(chunk):
            on_event(event, ns)
            if recorder.stopped:
                break
        if recorder.stopped:
            break
    else:
        # EOF. Gemini has no end marker: a close after the finish chunk is its normal end, and
        # the stream's content ended with its last data event (the close only confirms it).
        if adapter.ends_on_close and recorder.finished:
            recorder.end_ns = recorder.last_data_ns
        else:
            recorder.fail_with(
                missing_end_marker(adapter.name, received),
                at_ns=stream.read_ns if stamped else perf_counter_ns(),
            )
        return
    if recorder.ended and not recorder.error_category:
        # Read the rest (normally just the chunked terminator) so that the connection can be
        # reused; a server that holds the stream open after its end marker loses it instead.
        try:
            async with asyncio.timeout(_DRAIN_GRACE_S):
                async for chunk in chunks:
                    received += len(chunk)
                    if received > max_bytes:
                        break
        except TimeoutError:
            pass


async def _read_some(chunks: Any) -> bytes:
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) >= _ERROR_BODY_BYTES:
            break
    return bytes(body[:_ERROR_BODY_BYTES])


def _http_error(
    recorder: Recorder, adapter: Adapter, response: httpx.Response, body: bytes
) -> None:
    try:
        error = adapter.classify_http_error(response.status_code, response.headers, body)
    except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the sample
        error = StreamError(
            classify_status(response.status_code),
            f"HTTP {response.status_code} (body not understood: {type(exc).__name__})",
        )
    recorder.fail_with(error, at_ns=recorder.end_ns)


__all__ = ["PreparedRequest", "execute", "measure_request", "prepare_request"]
