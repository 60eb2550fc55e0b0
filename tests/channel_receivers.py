"""Loopback receivers for channel tests: one HTTPS server (a private CA trusted via
REQUESTS_CA_BUNDLE) that answers at each service's endpoint shape, and apprise's fixed service
URLs pointed at it. It records every request and can answer a scripted status or hang."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import trustme
from apprise.plugins import discord, opsgenie, pagerduty, slack


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self):
        return json.loads(self.body)


@dataclass
class Receiver:
    base: str = ""
    requests: list[Received] = field(default_factory=list)
    # Answers by path prefix, consumed in order: an int is a status, "hang" never answers.
    script: dict[str, list] = field(default_factory=dict)
    hang_s: float = 3.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def at(self, prefix: str) -> list[Received]:
        return [r for r in self.requests if r.path.startswith(prefix)]

    def next_answer(self, path: str):
        with self.lock:
            for prefix, answers in self.script.items():
                if path.startswith(prefix) and answers:
                    return answers.pop(0)
        return 200


def handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            answer = receiver.next_answer(self.path)
            if answer == "hang":
                time.sleep(receiver.hang_s)
                return
            with receiver.lock:
                receiver.requests.append(Received(self.path, dict(self.headers), body))
            self.send_response(answer)
            # Slack's incoming webhooks answer a plain "ok"; the others JSON.
            slack = self.path.startswith("/slack/")
            reply = b"ok" if slack else b'{"status":"success","dedup_key":"x","requestId":"r1"}'
            self.send_header("Content-Type", "text/plain" if slack else "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args) -> None:
            pass

    return Handler


@contextmanager
def serve(receiver: Receiver, tls: ssl.SSLContext | None) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(receiver))
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    scheme = "https" if tls else "http"
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def receivers(monkeypatch, tmp_path: Path) -> Iterator[Receiver]:
    """One receiver for every service: apprise's service URLs point at it (HTTPS), and plain
    HTTP for webhooks at receiver.base + '/hook' (and ntfy at '/ntfy')."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(tls)
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    receiver = Receiver()
    with serve(receiver, tls) as secure, serve(receiver, None) as plain:
        receiver.base = plain
        receiver.secure = secure
        monkeypatch.setattr(slack.NotifySlack, "webhook_url", f"{secure}/slack")
        monkeypatch.setattr(discord.NotifyDiscord, "notify_url", f"{secure}/discord")
        monkeypatch.setitem(pagerduty.PAGERDUTY_API_LOOKUP, "us", f"{secure}/pagerduty/v2/enqueue")
        monkeypatch.setitem(opsgenie.OPSGENIE_API_LOOKUP, "us", f"{secure}/opsgenie/v2/alerts")
        yield receiver
