"""The per-install secret: with DEBUG=1 every entry point makes or reads the one `manage.py up`
uses, so `runserver` serves pages; without DEBUG and without SECRET_KEY, start-up refuses with one
line naming the variable (Django alone reads SECRET_KEY lazily and answers every request 500)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
MANAGE = [sys.executable, str(ROOT / "manage.py")]


def fresh_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A fresh install's environment: no SECRET_KEY, an empty var folder."""
    unset = ("TOKSPEED_", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", "DEBUG")
    env = {k: v for k, v in os.environ.items() if not k.startswith(unset)}
    env |= {
        "DJANGO_SETTINGS_MODULE": "tokspeed.settings",
        "TOKSPEED_VAR_DIR": str(tmp_path / "var"),
        "TOKSPEED_BROKER_DIR": str(tmp_path / "broker"),
        "PYTHONUNBUFFERED": "1",
    }
    return env | extra


def run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_it_fails_check_without_a_secret_or_debug(tmp_path):
    result = run([*MANAGE, "check"], fresh_env(tmp_path, DEBUG="0"))
    said = result.stdout + result.stderr
    assert result.returncode != 0, f"check passed although every request would 500: {said}"
    assert "no issues" not in said and "SECRET_KEY is not set" in said, said
    assert not (tmp_path / "var").exists(), "without DEBUG no secret may be made behind one's back"


def test_it_refuses_to_start_a_wsgi_server_with_one_line(tmp_path):
    result = run([sys.executable, "-c", "import tokspeed.wsgi"], fresh_env(tmp_path, DEBUG="0"))
    assert result.returncode != 0, "the WSGI app loaded without any secret"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "export SECRET_KEY=" in lines[0], result.stderr


def test_it_stops_gunicorn_instead_of_restarting_workers_for_ever(tmp_path):
    """gunicorn respawns a worker that exits 1 for ever (the port open, every request hanging);
    a worker that cannot load the app must make the arbiter halt, with the line said."""
    env = fresh_env(tmp_path, DEBUG="0", GUNICORN_BIND=f"127.0.0.1:{free_port()}")
    gunicorn = [sys.executable, "-m", "gunicorn", "tokspeed.wsgi", "-c", "gunicorn.conf.py"]
    try:
        result = subprocess.run(
            gunicorn, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired as still_running:
        said = (still_running.stderr or b"").decode(errors="replace")[-600:]
        message = f"gunicorn kept restarting workers without a secret: {said}"
        raise AssertionError(message) from None
    assert result.returncode != 0, result.stderr[-600:]
    assert "export SECRET_KEY=" in result.stderr, result.stderr[-600:]


def test_it_makes_one_secret_every_entry_point_reads_with_debug(tmp_path):
    env = fresh_env(tmp_path, DEBUG="1")
    code = "import tokspeed.wsgi; from django.conf import settings; print(settings.SECRET_KEY)"
    first = run([sys.executable, "-c", code], env)
    assert first.returncode == 0, first.stderr
    secret = (tmp_path / "var" / "secret_key").read_text().strip()
    assert first.stdout.strip() == secret, "the WSGI app did not use the per-install secret"
    celery = "from tokspeed.celery import app; from django.conf import settings as s; "
    second = run([sys.executable, "-c", celery + "print(s.SECRET_KEY)"], env)
    assert second.stdout.strip() == secret, f"Celery read another secret: {second.stderr}"
    assert run([*MANAGE, "check"], env).returncode == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_it_serves_the_dashboard_under_runserver_with_debug(tmp_path, db):
    database = settings.DATABASES["default"]
    url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    env = fresh_env(tmp_path, DEBUG="1", DATABASE_URL=url, TOKSPEED_PUBLIC_DASHBOARD="1")
    port = free_port()
    command = [*MANAGE, "runserver", "--noreload", "--skip-checks", f"127.0.0.1:{port}"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "text": True}
    server = subprocess.Popen(command, cwd=ROOT, env=env, **quiet)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, server.stderr.read()
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "runserver did not answer within 90 s"
                time.sleep(0.2)
        assert page.status_code == 200, f"runserver answered {page.status_code}: {page.text[:300]}"
    finally:
        server.terminate()
        server.wait(timeout=30)
