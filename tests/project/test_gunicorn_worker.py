"""The web worker (tokspeed.gunicorn_worker, gunicorn.conf.py's worker_class) leaves a new
connection to another worker while each of its threads has a request, and a client that
connects and says nothing does not keep it from listening."""

from __future__ import annotations

import os
import runpy
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
WORKER = "tokspeed.gunicorn_worker.BalancedThreadWorker"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def server(workers: int = 2, threads: int = 1):
    """gunicorn serving tests/project/slow_wsgi.py with the worker (not gunicorn.conf.py's
    app), every worker booted."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "tests.project.slow_wsgi:application", "-k", WORKER,
         "-c", os.devnull, "-w", str(workers), "--threads", str(threads), "-b", f"127.0.0.1:{port}",
         "--keep-alive", "5"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    booted: list[str] = []
    reader = threading.Thread(target=lambda: booted.extend(process.stderr), daemon=True)
    reader.start()
    try:
        for _ in range(300):
            assert process.poll() is None, "gunicorn exited:\n" + "".join(booted)
            if sum("Booting worker" in line for line in booted) >= workers:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("gunicorn's workers did not boot:\n" + "".join(booted))
        time.sleep(0.3)  # each booted worker listening
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_worker_class_is_the_one_gunicorn_conf_names() -> None:
    assert runpy.run_path(str(ROOT / "gunicorn.conf.py"))["worker_class"] == WORKER


def test_a_busy_worker_leaves_a_new_connection_to_the_idle_one() -> None:
    """Two workers of one thread: while one serves a slow request, a client connecting is
    served by the other, every time (a plain gthread worker takes it half the time)."""
    with server() as base:
        pids: dict[str, str] = {}

        def ask(name: str, seconds: float) -> None:
            with httpx.Client(base_url=base, timeout=30) as client:  # a connection each
                pids[name] = client.get("/", params={"s": seconds}).text

        for trial in range(6):
            pids.clear()
            slow = threading.Thread(target=ask, args=("slow", 1.0))
            slow.start()
            time.sleep(0.3)  # the slow request is being served
            ask("second", 0.0)
            slow.join()
            assert pids["second"] != pids["slow"], f"trial {trial}: both on one busy worker"


def test_a_client_that_says_nothing_does_not_stop_the_workers_listening() -> None:
    with server() as base:
        host, port = base.removeprefix("http://").split(":")
        silent = [socket.create_connection((host, int(port))) for _ in range(4)]
        try:
            with httpx.Client(base_url=base, timeout=15) as client:
                assert client.get("/").status_code == 200
        finally:
            for connection in silent:
                connection.close()
