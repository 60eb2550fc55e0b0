"""Real servers to break: a Redis server of the test's own (a broker or a cache no other test
touches) that can be flushed or restarted, and a PostgreSQL outage confined to the test database.

The outage closes the test database to new connections and terminates every backend but the
test's own (`pg_terminate_backend`), so workers lose their connections and cannot reconnect
until it ends; other databases on the server (other checkouts' tests) are untouched. A restart
of the whole server is what `TOKSPEED_FAULTS_RESTART_PG=1` allows (see test_faults.py).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import redis
from django.db import connection
from psycopg import sql


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """`redis-server` on a free loopback port, without persistence: a restart loses everything."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> RedisServer:
        binary = shutil.which("redis-server") or "redis-server"
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],  # fmt: skip
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port).ping()
                return self
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # SIGKILL: what a crash does; nothing is saved
            self.process.wait(timeout=10)

    def restart(self, down_s: float = 0.0) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()

    def flush(self) -> None:
        redis.Redis(port=self.port).flushall()

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()


def _own_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@contextmanager
def _maintenance() -> Iterator[psycopg.Connection]:
    """A connection to the server's `postgres` database (a database cannot close itself)."""
    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"] or "127.0.0.1",
        port=s["PORT"] or 5432,
        user=s["USER"],
        password=s["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    ) as maintenance:
        yield maintenance


def kill_backends() -> int:
    """pg_terminate_backend every connection to the test database but the test's; how many."""
    name, mine = connection.settings_dict["NAME"], _own_pid()
    with _maintenance() as maintenance:
        row = maintenance.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> %s",
            [name, mine],
        ).fetchone()
    return row[0]


def _allow_connections(allow: bool) -> None:
    name = connection.settings_dict["NAME"]
    with _maintenance() as maintenance:
        maintenance.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}").format(
                sql.Identifier(name), sql.SQL("true" if allow else "false")
            )
        )


@contextmanager
def database_outage() -> Iterator[None]:
    """The test database goes away for every process but this test until the block ends."""
    _allow_connections(False)
    try:
        kill_backends()
        yield
    finally:
        _allow_connections(True)


class BadBytesProvider:
    """An OpenAI-compatible provider on loopback that answers request n with bodies[n % len]
    (raw bytes, sent as they are), in a thread of its own; `base_url` is its /v1."""

    def __init__(self, bodies: list[bytes]) -> None:
        import http.server

        self.bodies = bodies
        self.served = 0
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                self.rfile.read(int(self.headers.get("content-length") or 0))
                body = provider.bodies[provider.served % len(provider.bodies)]
                provider.served += 1
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> BadBytesProvider:
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
