"""The HTTP/1.1 exchange (RFC 9112) the measuring transport speaks over a stamping Connection.

Written here, small, because the general-purpose parser (h11 under httpcore) turned every body
chunk into several Python objects and generator hops: about 40 % of the client's CPU per SSE
event, which at 128 streams is the difference between keeping up and falling seconds behind.
This one decodes a whole network read of chunked body at once with bytes.find.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

from .connection import Connection

MAX_HEAD_BYTES = 64 * 1024
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_LINE_END = re.compile(rb"\r?\n")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_STATUS = re.compile(rb"HTTP/1\.([01]) (\d{3})(?: (.*))?")
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


@dataclass(slots=True)
class ResponseHead:
    status: int
    reason: bytes
    http_version: bytes
    headers: list[tuple[bytes, bytes]]
    framing: str  # "chunked", "length", "close" (body ends at EOF) or "none"
    length: int
    keep_alive: bool


def encode_head(request: httpx.Request) -> bytes:
    """Request line and headers; refuses header values that would split the message."""
    lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), request.url.raw_path)]
    for name, value in request.headers.raw:
        if not _TOKEN.fullmatch(name) or b"\r" in value or b"\n" in value:
            raise httpx.LocalProtocolError(f"invalid request header {name!r}")
        lines.append(name + b": " + value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def send_request(conn: Connection, request: httpx.Request, timeout: float | None) -> None:
    """Write the request; a body of known length goes out in the same write as the head."""
    head = encode_head(request)
    conn.expect_response()
    chunked = request.headers.get("transfer-encoding", "").lower() == "chunked"
    if not chunked:
        parts = [part async for part in request.stream]  # type: ignore[union-attr]
        await conn.send(head + b"".join(parts), timeout)
        return
    await conn.send(head, timeout)
    async for part in request.stream:  # type: ignore[union-attr]
        if part:
            await conn.send(b"%x\r\n%s\r\n" % (len(part), part), timeout)
    await conn.send(b"0\r\n\r\n", timeout)


async def receive_head(
    conn: Connection, *, method: str, timeout: float | None
) -> tuple[ResponseHead, bytes]:
    """The response head (skipping 1xx interim responses) and the body bytes read with it."""
    buffer = b""
    while True:
        match = _HEAD_END.search(buffer)
        while match is None:
            data = await conn.receive(timeout)
            if not data:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            buffer += data
            if len(buffer) > MAX_HEAD_BYTES and _HEAD_END.search(buffer) is None:
                raise httpx.RemoteProtocolError("response head larger than 64 KiB")
            match = _HEAD_END.search(buffer)
        head = _parse_head(buffer[: match.start()], method)
        buffer = buffer[match.end() :]
        if not 100 <= head.status < 200 or head.status == 101:
            return head, buffer


def _parse_head(raw: bytes, method: str) -> ResponseHead:
    lines = _LINE_END.split(raw)
    status_line = _STATUS.fullmatch(lines[0])
    if status_line is None:
        raise httpx.RemoteProtocolError(f"malformed status line {lines[0][:100]!r}")
    minor, status, reason = status_line.group(1), int(status_line.group(2)), status_line.group(3)
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise httpx.RemoteProtocolError(f"malformed response header {line[:100]!r}")
        headers.append((name, value.strip(b" \t")))
    fields: dict[bytes, list[bytes]] = {}
    for name, value in headers:
        fields.setdefault(name.lower(), []).append(value)
    connection = {t.strip().lower() for v in fields.get(b"connection", []) for t in v.split(b",")}
    keep_alive = b"close" not in connection and (minor == b"1" or b"keep-alive" in connection)
    framing, length = _framing(status, method, fields)
    if framing == "close":
        keep_alive = False
    return ResponseHead(
        status=status,
        reason=reason or b"",
        http_version=b"HTTP/1." + minor,
        headers=headers,
        framing=framing,
        length=length,
        keep_alive=keep_alive,
    )


def _framing(status: int, method: str, fields: dict[bytes, list[bytes]]) -> tuple[str, int]:
    """How the body is delimited (RFC 9112 §6.3)."""
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return "none", 0
    codings = [
        c.strip().lower() for v in fields.get(b"transfer-encoding", []) for c in v.split(b",")
    ]
    if codings:
        return ("chunked", 0) if codings[-1] == b"chunked" else ("close", 0)
    lengths = {v.strip() for v in fields.get(b"content-length", [])}
    if lengths:
        if len(lengths) > 1 or not all(v.isdigit() for v in lengths):
            raise httpx.RemoteProtocolError(f"bad content-length {sorted(lengths)!r}")
        return "length", int(lengths.pop())
    return "close", 0


class ChunkedDecoder:
    """Incremental chunked transfer decoding: feed network reads, get the payload they hold.

    Chunk extensions are ignored; like most clients it accepts a bare LF after a size line.
    """

    __slots__ = ("_pending", "_remaining", "_need_crlf", "_trailer", "done", "leftover")

    def __init__(self) -> None:
        self._pending = b""  # an incomplete size line or CRLF
        self._remaining = 0  # payload bytes still to come in the current chunk
        self._need_crlf = False  # the CRLF that closes a chunk's data
        self._trailer = False
        self.done = False
        self.leftover = b""  # bytes after the end of the message

    def feed(self, data: bytes) -> bytes:
        buf = self._pending + data if self._pending else data
        self._pending = b""
        out: list[bytes] = []
        pos, end = 0, len(buf)
        while pos < end:
            if self._remaining:
                take = min(self._remaining, end - pos)
                out.append(buf[pos : pos + take])
                pos += take
                self._remaining -= take
                self._need_crlf = not self._remaining
                continue
            if self._need_crlf:
                if buf.startswith(b"\r\n", pos):
                    pos += 2
                elif buf.startswith(b"\n", pos):
                    pos += 1
                elif end - pos == 1 and buf[pos] == 13:  # a lone CR: its LF is in the next read
                    break
                else:
                    raise httpx.RemoteProtocolError("chunk data not followed by CRLF")
                self._need_crlf = False
                continue
            eol = buf.find(b"\n", pos)
            if eol < 0:
                if end - pos > 1024:
                    raise httpx.RemoteProtocolError("chunk size line too long")
                break
            line = buf[pos:eol]
            pos = eol + 1
            if self._trailer:
                if line in (b"", b"\r"):
                    self.done = True
                    self.leftover = buf[pos:]
                    return b"".join(out)
                continue
            self._remaining = _chunk_size(line)
            self._trailer = not self._remaining
        self._pending = buf[pos:]
        return out[0] if len(out) == 1 else b"".join(out)


def _chunk_size(line: bytes) -> int:
    try:
        return int(line, 16) if line[-1:] == b"\r" and line[:1].isalnum() else _strict_size(line)
    except ValueError:
        return _strict_size(line)


def _strict_size(line: bytes) -> int:
    """The slow path: extensions, bare LF, stray spaces; and the errors."""
    size = line.rstrip(b"\r").split(b";", 1)[0].strip(b" \t")
    if not _HEX.fullmatch(size):
        raise httpx.RemoteProtocolError(f"bad chunk size line {line[:40]!r}")
    return int(size, 16)


class LengthDecoder:
    """A body of Content-Length bytes."""

    __slots__ = ("_remaining", "done", "leftover")

    def __init__(self, length: int) -> None:
        self._remaining = length
        self.done = length == 0
        self.leftover = b""

    def feed(self, data: bytes) -> bytes:
        payload, self.leftover = data[: self._remaining], data[self._remaining :]
        self._remaining -= len(payload)
        self.done = not self._remaining
        return payload


class UntilCloseDecoder:
    """A body that ends when the server closes the connection."""

    __slots__ = ("done", "leftover")

    def __init__(self) -> None:
        self.done = False
        self.leftover = b""

    def feed(self, data: bytes) -> bytes:
        return data


def body_decoder(head: ResponseHead) -> ChunkedDecoder | LengthDecoder | UntilCloseDecoder:
    if head.framing == "chunked":
        return ChunkedDecoder()
    if head.framing == "close":
        return UntilCloseDecoder()
    return LengthDecoder(head.length if head.framing == "length" else 0)
