"""Everything on one machine with one command (`python manage.py up`, behind `make run`).

Migrates the database (embedded SQLite by default), registers the provider catalogue and the
simulator's demo endpoints (labelled simulated), starts the simulator, a central Celery worker
(the "tokspeed" queue: tick, evaluations, email), an export worker (the "exports" queue:
background exports), a probe worker on every vantage's queue, beat and the web server, queues a
first round at once and prints the URL. The central worker is its own process so the tick and
evaluations never wait behind probe runs or a viewer's exports.
Ctrl-C (SIGINT) or SIGTERM stops every process it started, web server first, simulator last.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .env import read_secret
from .state import ensure_folders, ensure_secret

BASE_DIR = Path(__file__).resolve().parent.parent
MANAGE = [sys.executable, str(BASE_DIR / "manage.py")]
CELERY = [sys.executable, "-m", "celery", "-A", "tokspeed"]
LISTENING = re.compile(r"listening on (http://\S+)")
START_TIMEOUT_S = 60.0
# The simulator's documented port, so an endpoint added in the admin can point at it; the next
# free one when it is taken (another checkout running `make run`).
SIMULATOR_PORT = 9100
SIMULATOR_PORTS_TRIED = 100
# How each child is stopped: (signal, seconds to wait for it), then SIGKILL. The worker's warm
# shutdown is cut short on purpose: its cold shutdown hands unfinished runs back to the broker,
# and the next start resumes them with the samples they lack.
STOP_STEPS = {
    "web": [(signal.SIGTERM, 5.0)],
    "beat": [(signal.SIGTERM, 5.0)],
    "worker": [(signal.SIGTERM, 3.0), (signal.SIGQUIT, 15.0)],
    "central": [(signal.SIGTERM, 3.0), (signal.SIGQUIT, 15.0)],
    "exports": [(signal.SIGTERM, 3.0), (signal.SIGQUIT, 15.0)],
    "simulator": [(signal.SIGTERM, 5.0)],
}


def export_queue() -> str:
    from django.conf import settings

    return settings.TOKSPEED_EXPORT_QUEUE


class LaunchError(Exception):
    """A step failed; the message says which and why."""


def _die_with_parent() -> None:
    """Linux: a child gets SIGTERM if the launcher itself is killed (no orphans)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


@dataclass
class Launcher:
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 4
    first_round: bool = True
    simulator_port: int = SIMULATOR_PORT
    # Alert emails land here as files unless EMAIL_HOST or EMAIL_BACKEND is set: a laptop has
    # no SMTP server, and retrying one that refuses connections helps nobody.
    mail_dir: Path | None = None
    out: TextIO = field(default=sys.stdout)
    children: dict[str, subprocess.Popen] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def say(self, text: str) -> None:
        self.out.write(f"[tokspeed] {text}\n")
        self.out.flush()

    def env(self) -> dict[str, str]:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # A laptop demo: the simulator lives on loopback, and nobody has a login yet.
        env.setdefault("TOKSPEED_ALLOW_PRIVATE_ENDPOINTS", "1")
        env.setdefault("TOKSPEED_PUBLIC_DASHBOARD", "1")
        # Links in alert emails, channel messages and export downloads name this server, not
        # the settings' default port (`make run PORT=8123` linked to :8000).
        env.setdefault("TOKSPEED_BASE_URL", f"http://{self.host}:{self.port}")
        if self.mails_to_files:
            env["EMAIL_BACKEND"] = "django.core.mail.backends.filebased.EmailBackend"
            env["EMAIL_FILE_PATH"] = str(self.mail_dir)
        return env

    @property
    def mails_to_files(self) -> bool:
        asked = "EMAIL_HOST" in os.environ or "EMAIL_BACKEND" in os.environ
        return self.mail_dir is not None and not asked

    def run(self, prepare: Callable[[str], list[str]], queue_first_round: Callable[[], int]) -> int:
        """Start everything, wait for Ctrl-C or a child's death, stop everything; exit code.

        `prepare(simulator_url)` migrates and registers, returning the central queue then the
        vantages' queues;
        `queue_first_round()` queues the first runs and returns how many.
        """
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self._stop.set())
        self.prepare_state()
        try:
            if self.port == 0:
                self.port = free_port(self.host)
            elif port_in_use(self.host, self.port):
                raise LaunchError(f"port {self.port} is in use: pass another one (--port)")
            simulator_url = self.start_simulator()
            central, *probes = prepare(simulator_url)
            self.start("central", self.worker_command([central], name="central", concurrency=1))
            self.start("exports", self.worker_command([export_queue()], name="exports",
                                                      concurrency=1))  # fmt: skip
            if probes:  # no vantage yet: nothing to probe from
                self.start("worker", self.worker_command(probes, name="tokspeed"))
            self.start("beat", [*CELERY, "beat", "-l", "info"])
            self.start(
                "web",
                [*MANAGE, "runserver", f"{self.host}:{self.port}", "--noreload", "--insecure"],
            )
            if self.first_round:
                count = queue_first_round()
                self.say(f"first round: {count} runs queued (one request per endpoint)")
            self.wait_for_web()
            if self._stop.is_set():  # Ctrl-C while starting
                return 0
            url = f"http://{self.host}:{self.port}/"
            self.say(f"tokspeed is running: {url}  (admin: {url}admin/; Ctrl-C stops everything)")
            self.say(
                f"simulator: {simulator_url} (an endpoint added in the admin can use "
                f"{simulator_url}/v1 with protocol openai_chat and model sim-gpu)"
            )
            if self.mails_to_files:
                self.say(
                    f"alert emails are written to {self.mail_dir}/ and listed at {url}debug/mail/"
                )
            if "TOKSPEED_PUBLIC_DASHBOARD" not in os.environ:
                self.say(
                    "the dashboard is public here (TOKSPEED_PUBLIC_DASHBOARD=1); "
                    "for the admin, create a login: python manage.py createsuperuser"
                )
            return self.supervise()
        except LaunchError as exc:
            self.say(f"error: {exc}")
            return 1
        finally:
            self.stop_all()

    def prepare_state(self) -> None:
        """The var folder (SQLite database, beat schedule) and the per-install secret.

        Settings never create files when read; the children read the secret the launcher made.
        """
        from django.conf import settings

        ensure_folders([settings.VAR_DIR])
        if not os.environ.get("SECRET_KEY"):
            secret = settings.VAR_DIR / "secret_key"
            ensure_secret(secret)
            # This process read settings before the file existed (reading an empty SECRET_KEY
            # raises): take it from the file the children will read.
            settings.SECRET_KEY = read_secret(secret)

    def worker_command(
        self, queues: list[str], *, name: str, concurrency: int | None = None
    ) -> list[str]:
        # Mingle, gossip and heartbeats are chatter between workers; local workers need none.
        options = ["--without-mingle", "--without-gossip", "--without-heartbeat"]
        processes = str(concurrency or self.workers)
        return [*CELERY, "worker", "-Q", ",".join(queues), "-c", processes,
                "-n", f"{name}@%h", "-l", "info", *options]  # fmt: skip

    def start(self, name: str, command: list[str], **popen: object) -> subprocess.Popen:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter, fixed arguments
            command,
            cwd=BASE_DIR,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches the launcher only; it stops them in order
            preexec_fn=_die_with_parent,  # only a prctl call: safe between fork and exec
            **popen,
        )
        self.children[name] = process
        self.say(f"started {name} (pid {process.pid})")
        return process

    def simulator_listen_port(self) -> int:
        """The documented port, or the next free one after it (0: any free port)."""
        if self.simulator_port == 0:
            return 0
        for port in range(self.simulator_port, self.simulator_port + SIMULATOR_PORTS_TRIED):
            if not port_in_use("127.0.0.1", port):
                return port
        return 0

    def start_simulator(self) -> str:
        if self.mail_dir is not None:
            self.mail_dir.mkdir(parents=True, exist_ok=True)
        port = self.simulator_listen_port()
        process = self.start(
            "simulator",
            [*MANAGE, "simulate", "--port", str(port), "--host", "127.0.0.1"],
            stdout=subprocess.PIPE,
            text=True,
        )
        found: list[str] = []
        ready = threading.Event()

        def pump() -> None:  # relay its output; note the URL once it is bound
            for line in process.stdout:
                self.out.write(line)
                match = LISTENING.search(line)
                if match and not found:
                    found.append(match.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=pump, name="simulator-output", daemon=True).start()
        if not ready.wait(START_TIMEOUT_S) or not found:
            raise LaunchError("the simulator did not start (see its output above)")
        return found[0]

    def wait_for_web(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and not self._stop.is_set():
            self.check_children()
            try:
                with socket.create_connection((self.host, self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        if not self._stop.is_set():
            raise LaunchError(f"the web server did not listen on port {self.port}")

    def check_children(self) -> None:
        for name, process in self.children.items():
            if process.poll() is not None:
                raise LaunchError(f"{name} exited with code {process.returncode}")

    def supervise(self) -> int:
        while not self._stop.wait(0.5):
            self.check_children()
        self.say("stopping…")
        return 0

    def stop_all(self) -> None:
        for name in ("web", "beat", "worker", "central", "exports", "simulator"):
            process = self.children.pop(name, None)
            if process is not None:
                started = time.monotonic()
                self.stop(name, process)
                self.say(f"stopped {name} ({time.monotonic() - started:.1f} s)")
        if self._stop.is_set():
            self.say("stopped")

    def stop(self, name: str, process: subprocess.Popen) -> None:
        for sig, grace_s in STOP_STEPS[name]:
            if process.poll() is not None:
                break
            _signal(process, sig)
            try:
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                continue
        _killpg(process.pid, signal.SIGKILL)  # whatever is left in its group (pool children)
        process.wait()


def _signal(process: subprocess.Popen, sig: int) -> None:
    try:
        process.send_signal(sig)
    except ProcessLookupError:
        pass


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
