"""TCP (and TLS) connections whose every read carries the time its bytes arrived.

The stamp is the kernel's own receive timestamp (SO_TIMESTAMPNS: when the packet reached the
socket), moved onto the perf_counter_ns timeline; where the kernel gives none, it is the clock
read first thing in the event loop's readiness callback. Either way it is taken before any
parsing. This matters in a burst: the event loop parses one stream while another's bytes wait,
and a clock read when the measuring task gets round to them would be late by all that work
(tens of milliseconds at 128 streams on two cores). TLS is decrypted from memory buffers
(ssl.MemoryBIO) so that the raw socket, and its timestamps, stay ours.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import ssl
import struct
import sys
import time
from collections import deque
from collections.abc import Callable
from time import perf_counter_ns

import aiohappyeyeballs
import httpx

_READ_SIZE = 64 * 1024
_HIGH_WATER = 1 << 20  # stop reading while this much waits for the measuring task
# Linux socket option and control message type (same number) for nanosecond receive stamps;
# elsewhere the readiness callback's clock is the stamp.
_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35) if sys.platform == "linux" else None
_ANCILLARY_SIZE = socket.CMSG_SPACE(16) if _SO_TIMESTAMPNS else 0
_TIMESPEC = struct.Struct("qq")
_STALE_NS = 60 * 1_000_000_000  # a kernel stamp this old (or in the future) is not trusted
# CLOCK_REALTIME − perf_counter is trusted when read between two perf_counter reads this close.
_TIGHT_NS = 5_000
# Response head and first events read one message at a time: enough to cover the preamble
# events every protocol sends before the first token (Responses API: four).
_SPLIT_MESSAGES = 16
_EVENT_END = re.compile(rb"\n\r?\n")
_HAPPY_EYEBALLS_DELAY_S = 0.25  # RFC 8305's recommended connection attempt delay


def _realtime_offset() -> int:
    """CLOCK_REALTIME − perf_counter, read between two perf_counter reads; read again (up to
    three times, the tightest kept) when the process lost the CPU between them, which would put
    every kernel stamp of this read early by as long as it was away."""
    best_width = best = 0
    for attempt in range(3):
        before = perf_counter_ns()
        realtime = time.time_ns()
        after = perf_counter_ns()
        width = after - before
        if attempt == 0 or width < best_width:
            best_width, best = width, realtime - (before + after) // 2
        if width <= _TIGHT_NS:
            break
    return best


def _kernel_stamp(ancdata: list[tuple[int, int, bytes]], now_ns: int, offset_ns: int) -> int:
    """The kernel's CLOCK_REALTIME receive stamp on the perf_counter timeline, else `now_ns`.

    `offset_ns` is CLOCK_REALTIME − perf_counter read in this callback (so an earlier NTP step
    does not matter). For TCP the stamp is that of the last packet the read consumed.
    """
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(data) >= 16:
            seconds, nanos = _TIMESPEC.unpack_from(data)
            stamp = seconds * 1_000_000_000 + nanos - offset_ns
            # A packet may land between the callback's clock read and the read itself.
            if now_ns - _STALE_NS < stamp <= perf_counter_ns():
                return stamp
    return now_ns


class Connection:
    """One connection. After each `receive()`, `read_ns` is when the returned bytes arrived.

    Errors are raised as httpx exceptions (ReadTimeout, ReadError...), as a transport must.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self._chunks: deque[tuple[bytes, int]] = deque()
        self._buffered = 0
        self._eof_ns = 0  # when the peer closed or the socket failed (0 while open)
        self._error: OSError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._tls: ssl.SSLObject | None = None
        self._tls_in = ssl.MemoryBIO()
        self._tls_out = ssl.MemoryBIO()
        self._raw_ns = 0  # stamp of the last raw chunk fed to TLS
        self._split_budget = 0  # messages still to read one at a time (see _read_split)
        self.read_ns = 0
        self.peer = _peer(sock)  # the address that won the race, e.g. "203.0.113.7:443"
        # Opened ahead of its request (the round's connections are opened before t0): how long
        # TCP (+ proxy tunnel, + TLS) took then; None for a connection opened by its request.
        self.preopened_connect_ms: float | None = None
        self._reading = True
        self._loop.add_reader(sock.fileno(), self._on_readable)

    # --- the event loop's side ------------------------------------------------------------

    def _on_readable(self) -> None:
        now = perf_counter_ns()
        offset = _realtime_offset()
        try:
            if self._split_budget > 0 and _SO_TIMESTAMPNS is not None:
                self._read_split(now, offset)
            else:
                data, ancdata, _flags, _address = self._sock.recvmsg(_READ_SIZE, _ANCILLARY_SIZE)
                self._arrived(data, _kernel_stamp(ancdata, now, offset) if ancdata else now)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._error = exc
            self._arrived(b"", now)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _read_split(self, now: int, offset: int) -> None:
        """Read what is queued one message at a time, so each gets its own packet's stamp.

        A TCP read reports the stamp of the last packet it consumed. At the start of a
        response (head, first events, the first token) the process may have been busy while
        several packets queued: read up to each SSE event end (or TLS record end) separately
        so that the first token is not stamped with a later packet's arrival.
        """
        queued = self._sock.recv(_READ_SIZE, socket.MSG_PEEK)
        if not queued:
            self._arrived(b"", now)  # the peer closed
            return
        ends = _record_ends(queued) if self._tls is not None else _event_ends(queued)
        taken = 0
        for end in ends[: self._split_budget] + [len(queued)]:
            if end <= taken:
                continue
            data, ancdata, _flags, _address = self._sock.recvmsg(end - taken, _ANCILLARY_SIZE)
            self._arrived(data, _kernel_stamp(ancdata, now, offset) if ancdata else now)
            taken += len(data)
            if not data:
                return
        self._split_budget -= len(ends)

    def _arrived(self, data: bytes, stamp: int) -> None:
        if not data:
            self._eof_ns = stamp
            self._stop_reading()
            return
        self._chunks.append((data, stamp))
        self._buffered += len(data)
        if self._buffered > _HIGH_WATER:
            self._stop_reading()

    def expect_response(self) -> None:
        """A request is going out: read the start of its response message by message."""
        self._split_budget = _SPLIT_MESSAGES

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._sock.fileno())

    # --- the measuring task's side ----------------------------------------------------------

    async def _receive_raw(self, timeout: float | None) -> bytes:
        if not self._chunks and not self._eof_ns:
            waiter = self._waiter = self._loop.create_future()
            timer = self._loop.call_later(timeout, _expire, waiter) if timeout is not None else None
            try:
                await waiter
            except TimeoutError:
                raise httpx.ReadTimeout(f"no data from the server for {timeout:g} s") from None
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
        if self._chunks:
            data, self._raw_ns = self._chunks.popleft()
            self._buffered -= len(data)
            if not self._reading and not self._eof_ns and self._buffered <= _HIGH_WATER // 2:
                self._reading = True
                self._loop.add_reader(self._sock.fileno(), self._on_readable)
            return data
        self._raw_ns = self._eof_ns
        if self._error is not None:
            raise httpx.ReadError(str(self._error) or type(self._error).__name__)
        return b""

    async def receive(self, timeout: float | None) -> bytes:
        """The next piece of data as it arrived; b"" once the peer closed."""
        if self._tls is None:
            data = await self._receive_raw(timeout)
            self.read_ns = self._raw_ns
            return data
        while True:
            try:
                data = self._tls.read(_READ_SIZE)
            except ssl.SSLWantReadError:
                raw = await self._receive_raw(timeout)
                if raw:
                    self._tls_in.write(raw)
                else:
                    self._tls_in.write_eof()
                continue
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                data = b""
            except ssl.SSLError as exc:
                raise httpx.ReadError(f"TLS error: {exc}") from exc
            if self._tls_out.pending:  # e.g. an answer to a TLS 1.3 key update
                await self._send_raw(self._tls_out.read(), timeout)
            self.read_ns = self._raw_ns
            return data

    async def send(self, data: bytes, timeout: float | None) -> None:
        if self._tls is not None:
            self._tls.write(data)
            data = self._tls_out.read()
        await self._send_raw(data, timeout)

    async def _send_raw(self, data: bytes, timeout: float | None) -> None:
        if self._closed or self._eof_ns:
            raise httpx.WriteError("the connection was closed by the server")
        try:
            async with asyncio.timeout(timeout):
                await self._loop.sock_sendall(self._sock, data)
        except TimeoutError as exc:
            raise httpx.WriteTimeout("the server did not accept the request in time") from exc
        except OSError as exc:
            raise httpx.WriteError(str(exc) or type(exc).__name__) from exc

    @property
    def idle_and_healthy(self) -> bool:
        """True while nothing arrived unasked: an idle connection the server has not closed."""
        if self._closed or self._eof_ns:
            return False
        if self._tls is not None:
            while self._chunks:  # session tickets may arrive after a response: not a problem
                data, _ = self._chunks.popleft()
                self._buffered -= len(data)
                self._tls_in.write(data)
            try:
                return not self._tls.read(_READ_SIZE)
            except ssl.SSLWantReadError:
                return True
            except ssl.SSLError:
                return False
        return not self._chunks

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._stop_reading()
            self._sock.close()

    async def start_tls(
        self, context: ssl.SSLContext, server_hostname: str, timeout: float | None
    ) -> Connection:
        tls = context.wrap_bio(self._tls_in, self._tls_out, server_hostname=server_hostname)
        try:
            async with asyncio.timeout(timeout):
                while True:
                    try:
                        tls.do_handshake()
                        break
                    except ssl.SSLWantReadError:
                        if self._tls_out.pending:
                            await self._send_raw(self._tls_out.read(), None)
                        raw = await self._receive_raw(None)
                        if not raw:
                            raise httpx.ConnectError(
                                "connection closed during the TLS handshake"
                            ) from None
                        self._tls_in.write(raw)
                if self._tls_out.pending:
                    await self._send_raw(self._tls_out.read(), None)
        except TimeoutError as exc:
            self.close()
            raise httpx.ConnectTimeout("TLS handshake timed out") from exc
        except (ssl.SSLError, httpx.TransportError) as exc:
            self.close()
            raise httpx.ConnectError(f"TLS handshake failed: {exc}") from exc
        self._tls = tls
        return self


def _event_ends(data: bytes) -> list[int]:
    """Offsets just after each blank line (an SSE event end, or the end of an HTTP head)."""
    return [match.end() for match in _EVENT_END.finditer(data)]


def _record_ends(data: bytes) -> list[int]:
    """Offsets just after each complete TLS record (5-byte header, then its length)."""
    ends: list[int] = []
    position = 0
    while position + 5 <= len(data):
        position += 5 + int.from_bytes(data[position + 3 : position + 5], "big")
        if position > len(data):
            break
        ends.append(position)
    return ends


def _peer(sock: socket.socket) -> str:
    try:
        address = sock.getpeername()
    except OSError:
        return ""
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if sock.family == socket.AF_INET6 else f"{host}:{port}"


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


async def _addresses(host: str, port: int) -> list[tuple]:
    """getaddrinfo's answers (family, type, proto, canonname, sockaddr), in resolver order."""
    try:
        ip = ipaddress.ip_address(host)  # a literal needs no resolver thread
    except ValueError:
        return await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port))]


async def open_connection(
    host: str, port: int, timeout: float | None, *, check: Callable[[str, str], None] | None = None
) -> Connection:
    """Resolve and connect, TCP_NODELAY, kernel RX stamps on.

    A host with several addresses is raced (RFC 8305 Happy Eyeballs, aiohappyeyeballs: families
    interleaved, the next attempt 250 ms after the last), so a dead IPv6 address costs at most
    that delay, never a whole connect timeout inside a measured TTFT. `check(host, address)`
    may refuse each resolved address (AddressRefused) before anything is sent to it.
    """
    try:
        async with asyncio.timeout(timeout):
            infos = await _addresses(host, port)
            if check is not None:
                for info in infos:
                    check(host, info[4][0])
            sock = await aiohappyeyeballs.start_connection(
                infos, happy_eyeballs_delay=_HAPPY_EYEBALLS_DELAY_S, interleave=1
            )
    except TimeoutError as exc:
        raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
    except socket.gaierror as exc:
        raise httpx.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from exc
    except OSError as exc:
        raise httpx.ConnectError(f"connecting to {host}:{port}: {exc}") from exc
    sock.setblocking(False)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if _SO_TIMESTAMPNS is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        except OSError:
            pass  # no kernel stamps: the readiness callback's clock is used
    return Connection(sock)
