"""`make run PORT=…`: the links its processes write (export downloads, alert emails, channel
messages) name the server it started, not the settings' default port."""

from __future__ import annotations

import os
from pathlib import Path

from tests.sqlite_script import run_on_sqlite
from tokspeed.launcher import Launcher

_SCRIPT = """
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from dashboard.exports import jobs
call_command("migrate", verbosity=0)
user = get_user_model().objects.create_user("viewer", "viewer@team.example", "pw")
export = jobs.request_export(kind="runs", file_format="csv.gz", filters={}, user=user)
jobs.build(export.id)
client = Client()
client.force_login(user)
answer = client.get(f"/api/v1/exports/{export.token}/", HTTP_HOST="127.0.0.1")
print("DOWNLOAD", answer.json()["download"])
"""


def test_an_export_link_names_the_port_make_run_serves(tmp_path: Path) -> None:
    # What a child of `manage.py up --port 8123` gets on top of the environment it was run in.
    launched = Launcher(port=8123, mail_dir=tmp_path / "mail").env()
    added = {k: v for k, v in launched.items() if os.environ.get(k) != v}
    secret = "a-test-secret-" + "x" * 40  # noqa: S105 (a test's own)
    done = run_on_sqlite(_SCRIPT, tmp_path, SECRET_KEY=secret, **added)
    link = next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("DOWNLOAD"))
    assert link.startswith("http://127.0.0.1:8123/api/v1/exports/"), link


def test_a_base_url_set_in_the_environment_is_kept(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOKSPEED_BASE_URL", "https://tokspeed.example.com")
    launched = Launcher(port=8123, mail_dir=tmp_path / "mail").env()
    assert launched["TOKSPEED_BASE_URL"] == "https://tokspeed.example.com"
