"""The httpx client measurements use: a transport over stamping connections.

httpx lets a client plug in its own transport; this one speaks HTTP/1.1 (http11.py)
over the connections of connection.py, whose every read carries its arrival time.
Why not httpcore's pool: it re-scans every connection for every request it queues and every
response it closes (cubic per burst: ~10⁶ checks at 128 streams, seconds of CPU spent after t0,
inside the TTFT of the requests waiting), its locks yield to the event loop several times per
request, and h11 costs more per chunk than this whole module. Idle connections wait here in a
per-origin stack: O(1) to take one, O(1) to give one back.

The client honours httpx's "trace" request extension for connect timing (the same event names
as httpcore), sends `Accept-Encoding: identity` (aiter_raw must see the event stream as sent)
and uses no proxies and no redirects: we time the endpoint itself.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import cache
from typing import Any

import httpx

from ..measurement import Limits
from . import http11
from .connection import Connection, open_connection

Trace = Callable[[str, dict[str, Any]], Awaitable[None]]
_Origin = tuple[str, str, int]


@cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default verification (certifi); loading the CA bundle takes ~0.2 s, so once."""
    context = httpx.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


class _Body(httpx.AsyncByteStream):
    """The response body, one piece per network read; `conn.read_ns` stamps each piece."""

    def __init__(
        self,
        pool: StampingTransport,
        origin: _Origin,
        conn: Connection,
        head: http11.ResponseHead,
        first: bytes,
        read_timeout: float | None,
    ) -> None:
        self._pool, self._origin, self._conn, self._head = pool, origin, conn, head
        self._first = first  # body bytes that came with the head (same arrival stamp)
        self._timeout = read_timeout
        self._complete = False
        self._released = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn, timeout = self._conn, self._timeout
        decoder = http11.body_decoder(self._head)
        data, self._first = self._first, b""
        if decoder.done:  # no body (204, 304, HEAD): anything more is a protocol error
            self._complete = not data
            return
        while not decoder.done:
            if data:
                payload = decoder.feed(data)
                if payload:
                    yield payload
                if decoder.done:
                    break
            data = await conn.receive(timeout)
            if not data:
                if isinstance(decoder, http11.UntilCloseDecoder):
                    return  # the body ends with the connection, which is not reusable
                raise httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body"
                )
        # Bytes beyond the message would be the start of a response nobody asked for.
        self._complete = not decoder.leftover

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            reusable = self._complete and self._head.keep_alive
            self._pool._give_back(self._origin, self._conn, reusable=reusable)


class StampingTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over stamping connections; at most `max_connections` open, idle ones reused."""

    def __init__(self, *, max_connections: int, ssl_context: ssl.SSLContext | None = None) -> None:
        self._ssl_context = ssl_context
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: dict[_Origin, list[Connection]] = {}  # most recently used last

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}")
        host = url.raw_host.decode("ascii")
        origin = (url.scheme, host, url.port or (443 if url.scheme == "https" else 80))
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        trace: Trace | None = request.extensions.get("trace")
        await self._take_slot(timeouts.get("pool"))
        try:
            reused = self._reusable(origin)
            try:
                conn, head, first = await self._exchange(reused, origin, request, timeouts, trace)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                if reused is None:
                    raise
                # The server closed the kept-alive connection as we reused it: once more, fresh.
                conn, head, first = await self._exchange(None, origin, request, timeouts, trace)
        except BaseException:
            self._slots.release()
            raise
        return httpx.Response(
            status_code=head.status,
            headers=head.headers,
            stream=_Body(self, origin, conn, head, first, timeouts.get("read")),
            extensions={
                "http_version": head.http_version,
                "reason_phrase": head.reason,
                "network_stream": conn,
            },
        )

    async def _exchange(
        self,
        conn: Connection | None,
        origin: _Origin,
        request: httpx.Request,
        timeouts: dict[str, float | None],
        trace: Trace | None,
    ) -> tuple[Connection, http11.ResponseHead, bytes]:
        if conn is None:
            conn = await self._connect(origin, timeouts.get("connect"), trace)
        try:
            await http11.send_request(conn, request, timeouts.get("write"))
            head, first = await http11.receive_head(
                conn, method=request.method, timeout=timeouts.get("read")
            )
            return conn, head, first
        except BaseException:
            conn.close()
            raise

    async def _connect(
        self, origin: _Origin, timeout: float | None, trace: Trace | None
    ) -> Connection:
        scheme, host, port = origin
        info = {"host": host, "port": port}
        if trace is not None:
            await trace("connection.connect_tcp.started", info)
        conn = await open_connection(host, port, timeout)
        if trace is not None:
            await trace("connection.connect_tcp.complete", {**info, "return_value": conn})
        if scheme == "https":
            if trace is not None:
                await trace("connection.start_tls.started", info)
            conn = await conn.start_tls(self._ssl_context or _ssl_context(), host, timeout)
            if trace is not None:
                await trace("connection.start_tls.complete", {**info, "return_value": conn})
        return conn

    async def _take_slot(self, timeout: float | None) -> None:
        if not self._slots.locked():
            await self._slots.acquire()  # returns at once, without yielding
            return
        try:
            async with asyncio.timeout(timeout):
                await self._slots.acquire()
        except TimeoutError as exc:
            raise httpx.PoolTimeout("no free connection in the pool in time") from exc

    def _reusable(self, origin: _Origin) -> Connection | None:
        stack = self._idle.get(origin)
        while stack:
            conn = stack.pop()
            if conn.idle_and_healthy:
                return conn
            conn.close()  # the server closed it (or sent something unasked) while idle
        return None

    def _give_back(self, origin: _Origin, conn: Connection, *, reusable: bool) -> None:
        self._slots.release()
        if reusable and conn.idle_and_healthy:
            self._idle.setdefault(origin, []).append(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        stacks, self._idle = self._idle, {}
        for stack in stacks.values():
            for conn in stack:
                conn.close()


def make_client(
    *, limits: Limits, max_connections: int, ssl_context: ssl.SSLContext | None = None
) -> httpx.AsyncClient:
    """One client for many requests: up to `max_connections` stamping connections.

    Size it to the burst, so that no request waits for a connection inside its own TTFT.
    `ssl_context` replaces the default verification (certifi's CA bundle), e.g. for a private CA.
    """
    if max_connections < 1:
        raise ValueError("max_connections must be at least 1")
    return httpx.AsyncClient(
        transport=StampingTransport(max_connections=max_connections, ssl_context=ssl_context),
        headers={"accept-encoding": "identity"},
        timeout=httpx.Timeout(
            connect=limits.connect_timeout_s,
            # Idle time is enforced per data event by measure's watchdog (keep-alive comments
            # would reset a per-read timeout); no timer per read here.
            read=None,
            write=limits.idle_timeout_s,
            pool=limits.deadline_s,
        ),
        follow_redirects=False,
        trust_env=False,
    )
