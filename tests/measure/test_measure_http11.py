"""The measuring transport's HTTP/1.1 over real sockets: framing, keep-alive, broken servers.

Each test runs a raw asyncio TCP server that writes exact bytes, so that framing the usual
servers never produce (bare LF, chunk extensions, close-delimited bodies) is covered too.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

import httpx
import pytest

from benchmarks.measure import Limits, make_client
from benchmarks.measure.http.http11 import ChunkedDecoder

LIMITS = Limits(connect_timeout_s=2, idle_timeout_s=5, deadline_s=10)
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    return head + await reader.readexactly(length)


def exchange(handler: Handler, requests: int = 1) -> tuple[list[httpx.Response | Exception], int]:
    """Send `requests` POSTs one after another; returns responses (read) and connections seen."""
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    async def main() -> list[httpx.Response | Exception]:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        results: list[httpx.Response | Exception] = []
        async with server, make_client(limits=LIMITS, max_connections=1) as client:
            for _ in range(requests):
                try:
                    response = await client.post(f"http://127.0.0.1:{port}/x", json={"a": 1})
                    results.append(response)
                except httpx.HTTPError as exc:
                    results.append(exc)
        return results

    results = asyncio.run(main())
    return results, connections


def test_it_decodes_chunked_bodies_split_at_any_byte() -> None:
    payloads = [b"data: one\n\n", b"x" * 300, b"data: three\n\n"]
    wire = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in payloads) + b"0\r\n\r\n"
    rng = random.Random(7)
    for _ in range(200):
        decoder, out, pos = ChunkedDecoder(), b"", 0
        while pos < len(wire):
            step = rng.randint(1, 37)
            out += decoder.feed(wire[pos : pos + step])
            pos += step
        assert out == b"".join(payloads) and decoder.done and decoder.leftover == b""


@pytest.mark.parametrize("line", [b"zz\r\n", b"-5\r\n", b"+5\r\n", b"5 5\r\n"])
def test_it_refuses_a_bad_chunk_size(line: bytes) -> None:
    with pytest.raises(httpx.RemoteProtocolError, match="bad chunk size"):
        ChunkedDecoder().feed(line)


def test_it_reuses_a_connection_after_a_chunked_answer() -> None:
    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(3):
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            writer.write(b"5;name=value\r\nhello\r\n6\nworld!\r\n0\r\nX-Trailer: 1\r\n\r\n")
            await writer.drain()

    results, connections = exchange(chunked, requests=3)

    assert [r.text for r in results] == ["helloworld!"] * 3  # extension, bare LF, trailer
    assert connections == 1


def test_it_reads_a_body_delimited_by_close_and_does_not_reuse_it() -> None:
    async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it")
        await writer.drain()

    results, connections = exchange(until_close, requests=2)

    assert [r.text for r in results] == ["all of it", "all of it"]
    assert connections == 2


def test_it_skips_interim_responses_and_reads_content_length() -> None:
    async def interim(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n")
        writer.write(b"HTTP/1.1 429 Too Many\r\nContent-Length: 4\r\nRetry-After: 3\r\n\r\nslow")
        await writer.drain()

    [response], _ = exchange(interim)

    assert response.status_code == 429 and response.text == "slow"
    assert response.headers["retry-after"] == "3"


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (b"", httpx.RemoteProtocolError),  # closed without a response
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", httpx.RemoteProtocolError),
        (b"SPDY/3 200 OK\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n", httpx.RemoteProtocolError),
    ],
)
def test_it_raises_httpx_errors_for_broken_answers(answer: bytes, error: type) -> None:
    async def broken(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer)
        await writer.drain()

    [result], _ = exchange(broken)

    assert isinstance(result, error)


def test_it_sends_the_request_head_and_body_as_written() -> None:
    seen: list[bytes] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await read_request(reader))
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        await writer.drain()

    [response], _ = exchange(record)

    assert response.status_code == 204
    head, body = seen[0].split(b"\r\n\r\n")
    assert head.startswith(b"POST /x HTTP/1.1\r\n")
    assert b"\r\naccept-encoding: identity" in head.lower() and body == b'{"a":1}'
