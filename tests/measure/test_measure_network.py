"""How the measuring client reaches a provider: connections opened before t0, proxies (a real
proxy.py on loopback), private addresses refused at connect time, address racing, CA bundles."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import trustme
from aiohttp import web

from benchmarks.clients import network_for
from benchmarks.measure import Limits, Measurement, Network, make_client, measure_burst
from benchmarks.measure.http import connection, network
from providers.base import EndpointConfig, ErrorCategory
from providers.models import Provider
from providers.simulator.process import SimulatorHandle

LIMITS = Limits(connect_timeout_s=3, idle_timeout_s=5, deadline_s=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def chat(base_url: str, model: str = "sim-fast+tokens=20") -> EndpointConfig:
    return EndpointConfig(base_url=base_url, protocol="openai_chat", model=model, api_key="k")


def burst(
    config: EndpointConfig, *, net: Network, concurrency: int = 1, cold: bool = False
) -> list[Measurement]:
    async def main() -> list[Measurement]:
        async with make_client(limits=LIMITS, max_connections=concurrency, network=net) as c:
            result = await measure_burst(
                c,
                config,
                prompts=["x"] * concurrency,
                max_tokens=50,
                limits=LIMITS,
                cold=cold,
            )
            return result.samples

    return asyncio.run(main())


# --- a server that records when it accepted each connection (same clock as the client) -------


class AcceptClock:
    """An OpenAI-style streaming server on loopback that stamps each accepted connection."""

    def __init__(self) -> None:
        self.accepted_ns: list[int] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted_ns.append(time.perf_counter_ns())
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                )
                await reader.readexactly(length)
                events = [{"choices": [{"index": 0, "delta": {"content": w}}]} for w in "abc"]
                events.append({"choices": [], "usage": {"completion_tokens": 3}})
                body = b"".join(b"data: %s\n\n" % json.dumps(e).encode() for e in events)
                body += b"data: [DONE]\n\n"
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(body), body)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def with_accept_clock(body):  # noqa: ANN001, ANN201 - a test helper
    async def main():  # noqa: ANN202
        clock = AcceptClock()
        server = await asyncio.start_server(clock.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return clock, await body(f"http://127.0.0.1:{port}/v1")
        finally:
            server.close()

    return asyncio.run(main())


def burst_against_clock(*, cold: bool, net: Network | None = None, concurrency: int = 3):
    async def body(base_url: str) -> list[Measurement]:
        net_ = net or Network()
        async with make_client(limits=LIMITS, max_connections=concurrency, network=net_) as c:
            result = await measure_burst(
                c,
                chat(base_url),
                prompts=["x"] * concurrency,
                max_tokens=5,
                limits=LIMITS,
                cold=cold,
            )
            return result.samples

    return with_accept_clock(body)


def test_it_opens_a_rounds_connections_before_the_clocks_start() -> None:
    clock, samples = burst_against_clock(cold=False)

    assert [m.ok for m in samples] == [True] * 3
    assert len(clock.accepted_ns) == 3
    assert max(clock.accepted_ns) < min(m.t0_ns for m in samples)
    # The connect still happened, and is still reported: once per connection, outside TTFT.
    assert all(m.connect_ms is not None and m.connect_ms > 0 for m in samples)


def test_it_connects_inside_the_clock_when_the_workload_measures_cold_starts() -> None:
    clock, samples = burst_against_clock(cold=True)

    assert [m.ok for m in samples] == [True] * 3
    assert min(clock.accepted_ns) > min(m.t0_ns for m in samples)
    assert all(m.connect_ms > 0 and m.connect_ms < m.ttfb_ms for m in samples)


def test_it_refuses_a_private_address_when_it_connects_and_sends_it_nothing() -> None:
    clock, samples = burst_against_clock(cold=False, net=Network(allow_private=False))

    assert clock.accepted_ns == []
    for m in samples:
        assert not m.ok and m.http_status is None and m.ttfb_ms is None
        assert "private or loopback" in m.error_message
        assert len(m.error_message) < 120


def test_it_refuses_a_host_name_that_resolves_to_loopback(simulator: SimulatorHandle) -> None:
    base = simulator.openai_base.replace("127.0.0.1", "localhost")

    refused = burst(chat(base), net=Network(allow_private=False))[0]
    allowed = burst(chat(base), net=Network(allow_private=True))[0]

    assert not refused.ok and "localhost resolves to a private" in refused.error_message
    assert allowed.ok


def test_it_races_a_hosts_addresses_and_connects_to_the_one_that_answers(
    simulator: SimulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    live_port = int(simulator.base_url.rsplit(":", 1)[1])
    dead = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", free_port()))
    live = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", live_port))

    async def two_addresses(host: str, port: int) -> list[tuple]:
        return [dead, live]

    monkeypatch.setattr(connection, "_addresses", two_addresses)
    m = burst(chat(simulator.openai_base), net=Network())[0]

    assert m.ok and m.output_tokens == 20
    assert m.connect_ms < 250  # the refused address did not hold the connect
    assert m.connect_address == f"127.0.0.1:{live_port}"  # which address won


# --- proxies --------------------------------------------------------------------------------


class Proxy:
    """proxy.py (from PyPI) on a loopback port, with its worker processes."""

    def __init__(self, *extra: str) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "proxy", "--hostname", "127.0.0.1", "--port", str(self.port)]
            + ["--num-workers", "1", "--num-acceptors", "1", *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its workers are child processes: stop them with it
        )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("proxy.py did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@contextmanager
def proxy_server(*extra: str) -> Iterator[Proxy]:
    proxy = Proxy(*extra)
    try:
        proxy.wait_ready()
        yield proxy
    finally:
        proxy.stop()


def test_it_measures_through_a_proxy_tunnel_like_a_direct_connection(
    simulator: SimulatorHandle,
) -> None:
    config = chat(simulator.openai_base, "sim-fast+tokens=30+ttft=150")
    with proxy_server() as proxy:
        proxied = burst(config, net=Network(proxy=f"http://{proxy.address}"), concurrency=2)
    direct = burst(config, net=Network(proxy=""), concurrency=2)

    assert all(m.ok and m.output_tokens == 30 for m in proxied + direct)
    for m in proxied:
        truth = simulator.truth(m.request_id)
        server_ttft_ms = (truth["first_token_ns"] - m.t0_ns) / 1e6
        assert 0 <= m.ttft_ms - server_ttft_ms < 40  # stamped on arrival, through the tunnel


def test_it_authenticates_to_a_proxy_and_reports_a_refusal_in_words(
    simulator: SimulatorHandle,
) -> None:
    config = chat(simulator.openai_base)
    with proxy_server("--basic-auth", "probe:s3cret") as proxy:
        refused = burst(config, net=Network(proxy=f"http://{proxy.address}"))[0]
        wrong = burst(config, net=Network(proxy=f"http://probe:nope@{proxy.address}"))[0]
        allowed = burst(config, net=Network(proxy=f"http://probe:s3cret@{proxy.address}"))[0]

    assert not refused.ok and "proxy refused the tunnel: 407" in refused.error_message
    assert not wrong.ok and "407" in wrong.error_message
    for m in (refused, wrong):  # the proxy's credentials to fix, not a stream to retry
        assert m.error_category == ErrorCategory.AUTH, f"a 407 read as {m.error_category}"
    assert "s3cret" not in wrong.error_message + refused.error_message
    assert allowed.ok and allowed.output_tokens == 20


def test_it_keeps_what_it_measured_when_the_proxy_drops_the_tunnel(
    simulator: SimulatorHandle,
) -> None:
    config = chat(simulator.openai_base, "sim-gpu+tokens=400+tps=40+ttft=100")

    async def main(proxy: Proxy) -> Measurement:
        net = Network(proxy=f"http://{proxy.address}")
        async with make_client(limits=LIMITS, max_connections=1, network=net) as c:
            task = asyncio.create_task(
                measure_burst(c, config, prompts=["x"], max_tokens=400, limits=LIMITS)
            )
            await asyncio.sleep(1.5)
            proxy.stop()  # mid-stream: about 50 of 400 tokens have arrived
            return (await task).samples[0]

    with proxy_server() as proxy:
        m = asyncio.run(main(proxy))

    assert not m.ok and m.error_category == ErrorCategory.STREAM_BROKEN
    assert m.ttft_ms is not None and m.ttft_ms < 1500


def test_it_calls_a_proxy_that_cannot_open_the_tunnel_unreachable(
    simulator: SimulatorHandle,
) -> None:
    config = chat(f"http://127.0.0.1:{free_port()}/v1")  # the proxy's CONNECT finds nobody
    with proxy_server() as proxy:
        m = burst(config, net=Network(proxy=f"http://{proxy.address}"))[0]

    assert not m.ok and m.http_status is None, m.error_message
    assert m.error_category == ErrorCategory.UNREACHABLE, (
        f"a tunnel the proxy could not open read as {m.error_category}: {m.error_message}"
    )


def test_it_follows_the_proxy_variables_and_no_proxy(
    simulator: SimulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = chat(simulator.openai_base)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")  # nothing listens
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    through_dead_proxy = burst(config, net=Network())[0]
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    bypassed = burst(config, net=Network())[0]

    assert not through_dead_proxy.ok and through_dead_proxy.http_status is None
    assert bypassed.ok


# --- TLS trust ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def private_ca(tmp_path_factory: pytest.TempPathFactory) -> tuple[trustme.CA, Path]:
    ca = trustme.CA()
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return ca, path


def tls_burst(ca: trustme.CA, net: Network) -> Measurement:
    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        chunk = {"choices": [{"index": 0, "delta": {"content": "hi"}}]}
        await response.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())
        return response

    async def main() -> Measurement:
        server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(server_context)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", stream)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001 - aiohttp has no getter
        try:
            async with make_client(limits=LIMITS, max_connections=1, network=net) as c:
                config = chat(f"https://127.0.0.1:{port}/v1")
                result = await measure_burst(c, config, prompts=["x"], max_tokens=5, limits=LIMITS)
                return result.samples[0]
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def test_it_trusts_a_providers_ca_bundle_and_ssl_cert_file(
    private_ca: tuple[trustme.CA, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ca, path = private_ca
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    untrusted = tls_burst(ca, Network())
    bundled = tls_burst(ca, Network(ca_bundle=str(path)))
    monkeypatch.setenv("SSL_CERT_FILE", str(path))
    from_env = tls_burst(ca, Network())

    assert not untrusted.ok and "certificate" in untrusted.error_message.lower()
    assert bundled.ok and bundled.output_chars == 2
    assert from_env.ok


def test_it_loads_the_ca_bundle_when_the_client_is_made_not_inside_a_request(
    private_ca: tuple[trustme.CA, Path],
) -> None:
    _, path = private_ca
    network.tls_context.cache_clear()

    async def main() -> int:
        async with make_client(
            limits=LIMITS, max_connections=1, network=Network(ca_bundle=str(path))
        ):
            return network.tls_context.cache_info().currsize

    assert asyncio.run(main()) == 1
    assert os.path.exists(path)


def test_it_reads_a_providers_proxy_variable_and_ca_bundle_when_a_run_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corporate = Provider(slug="p", proxy_env="CORP_PROXY", ca_bundle="/etc/corp-ca.pem")
    standard = Provider(slug="q")
    monkeypatch.setenv("CORP_PROXY", "http://proxy.corp.example:3128")
    monkeypatch.setenv("HTTPS_PROXY", "http://other.example:8080")
    monkeypatch.setenv("NO_PROXY", "internal.example")

    net = network_for(corporate)
    assert net.proxy_for("https", "api.openai.com") == httpx.URL("http://proxy.corp.example:3128")
    assert net.ca_bundle == "/etc/corp-ca.pem"
    assert network_for(standard).proxy_for("https", "api.openai.com") == httpx.URL(
        "http://other.example:8080"
    )
    assert network_for(standard).proxy_for("https", "internal.example") is None
    monkeypatch.setenv("CORP_PROXY", "")  # set but empty: this provider connects directly
    assert network_for(corporate).proxy_for("https", "api.openai.com") is None
