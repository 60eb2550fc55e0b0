"""TCP (and TLS) connections that stamp the clock the moment bytes arrive.

A thin asyncio Protocol: `data_received` runs inside the event loop's socket callback, right
after the kernel handed the bytes over, and reads `time.perf_counter_ns()` before anything else.
The stamp travels with the bytes. So the time of an SSE event is when its last byte reached the
process, not when the measuring task got round to parsing it: in a burst of hundreds of streams
the event loop reads every ready socket first and parses afterwards, and the difference between
the two is many milliseconds.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections import deque
from time import perf_counter_ns

import httpx

# Stop reading from the socket while this much arrived data waits for its reader (back-pressure).
_HIGH_WATER = 1 << 20


class _StampingProtocol(asyncio.Protocol):
    """Buffers (bytes, arrival ns) pairs and wakes the reader."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[tuple[bytes, int]] = deque()
        self.buffered = 0
        self.eof_ns = 0  # when the peer closed (0 while open)
        self.error: Exception | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.paused = False
        self.drain_waiter: asyncio.Future[None] | None = None
        self.write_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        # The clock first: this is the earliest moment user space sees these bytes.
        self.chunks.append((data, perf_counter_ns()))
        self.buffered += len(data)
        if self.buffered > _HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof_ns = perf_counter_ns()
        self._wake()
        return False  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.eof_ns:
            self.eof_ns = perf_counter_ns()
        self.error = exc
        self._wake()
        self.resume_writing()

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        waiter = self.drain_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


async def _wait(future: asyncio.Future[None], timeout: float | None) -> bool:
    """Wait for `future`; False when `timeout` (seconds) ran out first."""
    if timeout is None:
        await future
        return True
    timer = asyncio.get_running_loop().call_later(timeout, _expire, future)
    try:
        await future
        return True
    except TimeoutError:
        return False
    finally:
        timer.cancel()


def _expire(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


class Connection:
    """One TCP (or TLS) connection. After each `receive()`, `read_ns` is when its bytes arrived.

    Errors are raised as httpx exceptions (ConnectError, ReadTimeout...), as a transport must.
    """

    __slots__ = ("_protocol", "_transport", "read_ns")

    def __init__(self, protocol: _StampingProtocol, transport: asyncio.Transport) -> None:
        self._protocol = protocol
        self._transport = transport
        self.read_ns = 0

    async def receive(self, timeout: float | None) -> bytes:
        """The next piece of data as it arrived; b"" once the peer closed."""
        protocol = self._protocol
        if not protocol.chunks and not protocol.eof_ns:
            protocol.waiter = asyncio.get_running_loop().create_future()
            try:
                if not await _wait(protocol.waiter, timeout):
                    raise httpx.ReadTimeout(f"no data from the server for {timeout:g} s")
            finally:
                protocol.waiter = None
        if protocol.chunks:
            data, self.read_ns = protocol.chunks.popleft()
            protocol.buffered -= len(data)
            if protocol.paused and protocol.buffered <= _HIGH_WATER // 2:
                protocol.paused = False
                self._transport.resume_reading()
            return data
        self.read_ns = protocol.eof_ns
        if protocol.error is not None:
            raise httpx.ReadError(str(protocol.error) or type(protocol.error).__name__)
        return b""

    def unreceive(self, data: bytes) -> None:
        """Put back bytes read beyond the current response (same arrival stamp)."""
        if data:
            self._protocol.chunks.appendleft((data, self.read_ns))
            self._protocol.buffered += len(data)

    async def send(self, data: bytes, timeout: float | None) -> None:
        if self._transport.is_closing():
            raise httpx.WriteError("the connection was closed by the server")
        self._transport.write(data)
        protocol = self._protocol
        if protocol.write_paused:
            protocol.drain_waiter = asyncio.get_running_loop().create_future()
            try:
                if not await _wait(protocol.drain_waiter, timeout):
                    raise httpx.WriteTimeout("the server did not accept the request in time")
            finally:
                protocol.drain_waiter = None

    @property
    def idle_and_healthy(self) -> bool:
        """True while nothing arrived unasked: an idle connection the server has not closed."""
        return not (self._protocol.chunks or self._protocol.eof_ns or self._transport.is_closing())

    def close(self) -> None:
        self._transport.close()

    async def start_tls(
        self, context: ssl.SSLContext, server_hostname: str, timeout: float | None
    ) -> Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                tls = await loop.start_tls(
                    self._transport, self._protocol, context, server_hostname=server_hostname
                )
        except TimeoutError as exc:
            self.close()
            raise httpx.ConnectTimeout("TLS handshake timed out") from exc
        except (OSError, ssl.SSLError) as exc:
            self.close()
            raise httpx.ConnectError(f"TLS handshake failed: {exc}") from exc
        if tls is None:
            raise httpx.ConnectError("connection closed during the TLS handshake")
        self._protocol.transport = tls  # type: ignore[assignment]
        return Connection(self._protocol, tls)  # type: ignore[arg-type]


async def open_connection(host: str, port: int, timeout: float | None) -> Connection:
    """TCP connect (happy eyeballs for dual-stack hosts); TCP_NODELAY like every HTTP client."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout):
            transport, protocol = await loop.create_connection(
                _StampingProtocol, host, port, happy_eyeballs_delay=0.25
            )
    except TimeoutError as exc:
        raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
    except OSError as exc:
        raise httpx.ConnectError(f"connecting to {host}:{port}: {exc}") from exc
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return Connection(protocol, transport)
