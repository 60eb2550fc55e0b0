"""Real Celery parts for tests: point this process at a broker, start worker processes, and
read what a filesystem broker holds.

Workers are `celery -A tokspeed worker` subprocesses using the pytest-django test database, so
tests that start them must use committed data (`transactional_db`).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kombu.pools
from django.db import connection

from benchmarks.models import Run, Schedule, Vantage, Workload
from providers.models import Endpoint, Provider
from tokspeed.celery import app as current_app

REPO = Path(__file__).resolve().parents[1]
READY_TIMEOUT_S = 60.0
FILESYSTEM_URL = "filesystem://localhost//"
# When the helpers' endpoints and schedules say they were made: a fixed instant long before any
# clock a test runs at (so a schedule's latest slot is always due, whatever the hour or date).
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


def filesystem_options(folder: Path) -> dict[str, Any]:
    """Transport options of a filesystem broker living in `folder` (created here)."""
    for name in ("queue", "control", "processed"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
        "processed_folder": str(folder / "processed"),
        "store_processed": False,
    }


@contextmanager
def broker(url: str, options: dict[str, Any] | None = None) -> Iterator[None]:
    """Make this process publish to `url` for the duration (the producer pool is rebuilt)."""
    app = current_app
    saved = (app.conf.broker_url, app.conf.broker_transport_options)
    _switch(app, url, options or {})
    try:
        yield
    finally:
        _switch(app, *saved)


def _switch(app: Any, url: str, options: dict[str, Any]) -> None:
    # Producers are pooled per app and in kombu's global registry: drop both.
    kombu.pools.reset()
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.conf.broker_url = url
    app.conf.broker_transport_options = options
    app.__dict__.pop("amqp", None)  # cached_property holding the old connection settings


def queued_tasks(folder: Path) -> list[dict[str, Any]]:
    """Messages waiting in a filesystem broker: [{"queue", "task", "args"}], oldest first."""
    found = []
    for path in sorted((folder / "queue").glob("*.msg")):
        queue = path.name.partition(".")[2].removesuffix(".msg")
        message = json.loads(path.read_text())
        body = json.loads(base64.b64decode(message["body"]))
        found.append({"queue": queue, "task": message["headers"]["task"], "args": body[0]})
    return found


def worker_database_url() -> str:
    """DATABASE_URL of the database this test process uses (pytest-django's test database)."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class Worker:
    """A `celery worker` subprocess; its output is collected in `lines` by a reader thread."""

    def __init__(self, *, name: str, queues: list[str], env: dict[str, str], pool: str) -> None:
        self.name = name
        self.lines: list[str] = []
        self._ready = threading.Event()
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "tokspeed",
            "worker",
            "-Q",
            ",".join(queues),
            "-n",
            f"{name}@%h",
            "-P",
            pool,
            "-c",
            "1",
            "-l",
            "info",
            "--without-mingle",
            "--without-gossip",
            "--without-heartbeat",
        ]
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip())
            if " ready." in line:
                self._ready.set()

    def wait_ready(self) -> Worker:
        if not self._ready.wait(READY_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"worker {self.name} not ready:\n" + "\n".join(self.lines[-30:]))
        return self

    @property
    def hostname(self) -> str:
        return f"{self.name}@{os.uname().nodename}"

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, no ack, no goodbye (what a crashed machine does)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self) -> str:
        return "\n".join(self.lines)


def start_worker(
    *,
    name: str,
    queues: list[str],
    broker_url: str,
    broker_dir: Path | None = None,
    pool: str = "solo",
    **settings: str,
) -> Worker:
    """Start (without waiting) a worker on `queues` that uses this test's database.

    Extra keyword settings become environment variables (e.g. TOKSPEED_RUN_LEASE_S="1").
    """
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "CELERY_BROKER_URL": broker_url,
        "TOKSPEED_ALLOW_PRIVATE_ENDPOINTS": "1",
        **settings,
    }
    if broker_dir is not None:
        env["TOKSPEED_BROKER_DIR"] = str(broker_dir)
    return Worker(name=name, queues=queues, env=env, pool=pool)


@contextmanager
def workers(*started: Worker) -> Iterator[tuple[Worker, ...]]:
    """Wait until every started worker is ready (they boot in parallel); stop them on exit."""
    try:
        for each in started:
            each.wait_ready()
        yield started
    finally:
        for each in started:
            each.stop()


@contextmanager
def worker(**options: Any) -> Iterator[Worker]:
    """One ready worker (see start_worker), stopped on exit."""
    with workers(start_worker(**options)) as (one,):
        yield one


def wait_for(predicate: Any, *, timeout: float, message: str, interval: float = 0.1) -> Any:
    """Poll until `predicate()` is truthy; its value, or AssertionError with `message`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(message() if callable(message) else message)
        time.sleep(interval)


def sim_endpoint(simulator, model: str) -> Endpoint:
    """A simulated endpoint serving `model`, made LONG_AGO (so no schedule finds it new)."""
    provider, _ = Provider.objects.get_or_create(
        slug="sim",
        defaults={
            "name": "Sim",
            "protocol": "openai_chat",
            "base_url": simulator.openai_base,
            "simulated": True,
        },
    )
    made = Endpoint.objects.create(
        provider=provider, slug=f"e{Endpoint.objects.count()}", model=model
    )
    Endpoint.objects.filter(id=made.id).update(created_at=LONG_AGO)
    return made


def probe_vantage(slug: str | None = None) -> Vantage:
    """A vantage whose queue no other test uses (leftover messages never reach its workers).

    The one the migrations made ("local") is taken over when no earlier test flushed it: it gets
    such a queue and loses its default schedule, so a tick enqueues only what the test scheduled.
    """
    slug = slug or f"v{uuid.uuid4().hex[:6]}"
    queue = f"{slug}-{uuid.uuid4().hex[:8]}"
    vantage, made = Vantage.objects.get_or_create(
        slug=slug, defaults={"label": slug, "queue": queue}
    )
    if not made:
        vantage.schedules.all().delete()
        vantage.queue = queue
        vantage.save(update_fields=["queue"])
    return vantage


def due_schedule(vantage: Vantage, workload: Workload, endpoints: list[Endpoint]) -> Schedule:
    """A schedule every minute over `endpoints`, made LONG_AGO (so its latest slot is due)."""
    made = Schedule.objects.create(name=vantage.slug, vantage=vantage, interval_minutes=1)
    made.workloads.set([workload])
    made.endpoints.set(endpoints)
    Schedule.objects.filter(id=made.id).update(created_at=LONG_AGO)
    return made


def wait_ended(ids: list[int], *, timeout: float, procs=()) -> list[Run]:
    """The runs `ids`, once every one has ended; else AssertionError with their states and the
    last output of `procs` (workers, beat)."""

    def ended() -> list[Run] | None:
        found = list(Run.objects.filter(id__in=ids, status__in=Run.ENDED).order_by("id"))
        return found if len(found) == len(ids) else None

    def why() -> str:
        states = list(Run.objects.filter(id__in=ids).values_list("id", "status", "failure_reason"))
        return f"runs not ended: {states}\n" + "\n".join(p.output()[-3000:] for p in procs)

    return wait_for(ended, timeout=timeout, message=why, interval=0.2)
