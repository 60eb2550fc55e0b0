"""The production recipe (docs/operations.md): `check --deploy` is clean, and gunicorn with
DEBUG=0 serves the admin's CSS and the API docs' assets itself (whitenoise), with throttle
counters that two gunicorn workers share."""

from __future__ import annotations

import os
import re
import secrets
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
MANAGE = [sys.executable, str(ROOT / "manage.py")]


def recipe_env() -> dict[str, str]:
    """The variables the Production block of docs/operations.md exports (placeholders made real)."""
    recipe = (ROOT / "docs" / "operations.md").read_text()
    block = recipe.split("## Production", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    env: dict[str, str] = {}
    for line in block.splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] != ["export"]:
            continue
        for word in words[1:]:
            name, _, value = word.partition("=")
            env[name] = value
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    return {name: value for name, value in env.items() if value != "..."}


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    # The browser tests allow async-unsafe ORM calls in this process; a deployment never does.
    unset = ("TOKSPEED_", "SECURE_", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(unset)}
    env |= {
        "DJANGO_SETTINGS_MODULE": "tokspeed.settings",
        "TOKSPEED_VAR_DIR": str(tmp_path / "var"),
        "PYTHONUNBUFFERED": "1",
    }
    return env | extra


def test_it_passes_check_deploy_with_the_production_recipe(tmp_path):
    env = base_env(tmp_path, **recipe_env())
    assert env["DEBUG"] == "0" and env["SECURE_SSL_REDIRECT"] == "1"  # the recipe was read
    result = subprocess.run(
        [*MANAGE, "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
    assert not (tmp_path / "var").exists()  # reading settings made no files


# How long a request to the gunicorn under test may take: a worker's first request loads the
# URLconf and the API's schema, which takes seconds on a machine busy with the rest of the suite
# (httpx's default of 5 s timed out in a parallel run at a load average of 10).
ANSWER_S = 60
DAY_S = 86_400
EDGE_S = 120  # a burst of 12 requests ends well within this, even on a loaded machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clear_committed_cache(database: dict) -> None:
    """Empty the database cache outside the test's transaction, where gunicorn can see it."""
    with psycopg.connect(
        dbname=database["NAME"],
        user=database["USER"],
        host=database["HOST"],
        port=database["PORT"],
        autocommit=True,
    ) as connection:
        connection.execute("DELETE FROM tokspeed_cache")


@pytest.fixture
def gunicorn(tmp_path, db) -> Iterator[str]:
    """gunicorn, 2 workers, DEBUG=0, on the test database, after `collectstatic`."""
    database = settings.DATABASES["default"]
    database_url = (
        f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    )
    env = base_env(
        tmp_path,
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=database_url,
        STATIC_ROOT=str(tmp_path / "static"),
        TOKSPEED_BROKER_DIR=str(tmp_path / "broker"),
        TOKSPEED_PUBLIC_DASHBOARD="1",
        # A day's window: the counter is a fixed window, and a burst across its edge would be
        # counted in two (6 + up to 6 through)
        TOKSPEED_THROTTLE_ANON="6/day",
    )
    subprocess.run(
        [*MANAGE, "collectstatic", "--noinput", "-v", "0"], env=env, check=True, timeout=300
    )
    clear_committed_cache(database)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "tokspeed.wsgi", "-b", f"127.0.0.1:{port}", "-w", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()
            try:
                httpx.get(f"{url}/static/admin/css/base.css", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        clear_committed_cache(database)


@pytest.mark.slow
def test_it_serves_admin_css_and_api_docs_under_gunicorn(gunicorn):
    css = httpx.get(f"{gunicorn}/static/admin/css/base.css", timeout=ANSWER_S)
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert "body" in css.text
    docs = httpx.get(f"{gunicorn}/api/v1/docs/", timeout=ANSWER_S)
    assert docs.status_code == 200
    assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', docs.text)
    assert any("swagger-ui" in asset for asset in assets), docs.text[:500]
    for asset in assets:
        assert httpx.get(f"{gunicorn}{asset}", timeout=ANSWER_S).status_code == 200, asset


@pytest.mark.slow
def test_it_shares_throttle_counters_between_two_gunicorn_workers(gunicorn):
    # The throttle counts in fixed windows (UTC days here): a burst started in the last two
    # minutes of one would be counted in two, so it waits for the next (at most 2 minutes,
    # once a day) rather than read the edge as a leak between workers.
    left = DAY_S - time.time() % DAY_S
    if left < EDGE_S:
        time.sleep(left + 1)
    # A new connection per request: the kernel hands them to either worker.
    codes = [
        httpx.get(
            f"{gunicorn}/api/v1/workloads/", headers={"Connection": "close"}, timeout=ANSWER_S
        ).status_code
        for _ in range(12)
    ]
    assert codes.count(200) == 6, codes  # 6 a day in all, not 6 per worker
    assert codes[6:] == [429] * 6
