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
and follows no redirects: we time the endpoint itself. Behind a company proxy it opens an HTTP
CONNECT tunnel (network.py says which proxy) and runs TLS inside it over the same stamping
socket, so stamps stay the kernel's receive times; the proxy's own work is in connect_ms and,
for the request's bytes, in TTFT, as it is for every client behind that proxy.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from time import perf_counter_ns
from typing import Any

import httpx

from providers.errors import ProxyRefused

from ..measurement import Limits
from . import http11
from .connection import Connection, open_connection
from .network import Network

Trace = Callable[[str, dict[str, Any]], Awaitable[None]]
_Origin = tuple[str, str, int]


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

    def __init__(
        self,
        *,
        max_connections: int,
        network: Network | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._network = network or Network()
        # Built now, before any clock starts: loading a CA bundle blocks the loop for ~0.2 s.
        self._ssl_context = ssl_context or self._network.ssl_context()
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
        network = self._network
        if trace is not None:
            await trace("connection.connect_tcp.started", info)
        proxy = network.proxy_for(scheme, host)
        if proxy is None:
            check = None if network.allow_private else network.check_address
            conn = await open_connection(host, port, timeout, check=check)
        else:
            conn = await _tunnel(proxy, host, port, timeout, network)
        if trace is not None:
            await trace("connection.connect_tcp.complete", {**info, "return_value": conn})
        if scheme == "https":
            if trace is not None:
                await trace("connection.start_tls.started", info)
            conn = await conn.start_tls(self._ssl_context, host, timeout)
            if trace is not None:
                await trace("connection.start_tls.complete", {**info, "return_value": conn})
        return conn

    async def preconnect(self, url: httpx.URL, count: int, timeout: float | None) -> None:
        """Open connections to `url`'s origin until `count` wait idle, before any clock starts.

        A round's requests then find their connection ready, so connecting is never inside a
        TTFT; each connection keeps how long it took to open (reported as connect_ms by the
        request that uses it first). A connection that fails to open is left to the request,
        which meets the same error and records it.
        """
        host = url.raw_host.decode("ascii")
        origin = (url.scheme, host, url.port or (443 if url.scheme == "https" else 80))
        idle = self._idle.setdefault(origin, [])
        for conn in [conn for conn in idle if not conn.idle_and_healthy]:
            idle.remove(conn)
            conn.close()
        missing = max(0, count - len(idle))

        async def one() -> Connection | None:
            started = perf_counter_ns()
            try:
                conn = await self._connect(origin, timeout, None)
            except httpx.TransportError:
                return None
            conn.preopened_connect_ms = (perf_counter_ns() - started) / 1e6
            return conn

        opened = await asyncio.gather(*(one() for _ in range(missing)))
        idle.extend(conn for conn in opened if conn is not None)

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
        """An idle connection to `origin` (the most recently used), or None."""
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
    *,
    limits: Limits,
    max_connections: int,
    network: Network | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> httpx.AsyncClient:
    """One client for many requests: up to `max_connections` stamping connections.

    Size it to the burst, so that no request waits for a connection inside its own TTFT.
    `network` says how to reach providers (proxy, CA bundle, private addresses); `ssl_context`
    replaces its verification outright (tests with a private CA).
    """
    if max_connections < 1:
        raise ValueError("max_connections must be at least 1")
    transport = StampingTransport(
        max_connections=max_connections, network=network, ssl_context=ssl_context
    )
    return httpx.AsyncClient(
        transport=transport,
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


async def preconnect(client: httpx.AsyncClient, url: httpx.URL, count: int) -> None:
    """Open `count` connections to `url`'s origin ahead of a round (see StampingTransport)."""
    transport = client._transport  # noqa: SLF001 - httpx keeps the mounted transport here
    if isinstance(transport, StampingTransport):
        await transport.preconnect(url, count, client.timeout.connect)


async def _tunnel(
    proxy: httpx.URL, host: str, port: int, timeout: float | None, network: Network
) -> Connection:
    """A connection through an HTTP proxy's CONNECT tunnel to host:port (RFC 9110 §9.3.6)."""
    if proxy.scheme != "http":
        raise httpx.ProxyError(f"unsupported proxy scheme {proxy.scheme!r}: use http://host:port")
    if not network.allow_private:
        _check_literal(host, network)
    proxy_host = proxy.raw_host.decode("ascii")
    conn = await open_connection(proxy_host, proxy.port or 80, timeout)
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if proxy.username or proxy.password:
        token = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode("ascii")
        head += f"Proxy-Authorization: Basic {token}\r\n"
    try:
        async with asyncio.timeout(timeout):
            await conn.send((head + "\r\n").encode("ascii"), None)
            answer, extra = await http11.receive_head(conn, method="CONNECT", timeout=None)
    except TimeoutError as exc:
        conn.close()
        raise httpx.ConnectTimeout(f"the proxy at {proxy_host} did not open a tunnel") from exc
    except httpx.TransportError as exc:
        conn.close()
        raise httpx.ProxyError(f"the proxy at {proxy_host} failed: {exc}") from exc
    if not 200 <= answer.status < 300 or extra:
        conn.close()
        reason = answer.reason.decode("latin-1")[:60]
        message = f"the proxy refused the tunnel: {answer.status} {reason}".strip()
        raise ProxyRefused(message, status=answer.status)
    return conn


def _check_literal(host: str, network: Network) -> None:
    """Through a proxy the proxy resolves names; an IP written in the URL is checked here."""
    try:
        network.check_address(host, host)
    except ValueError:
        pass  # a name, not an address
