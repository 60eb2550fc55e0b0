"""The dashboard's reads on SQLite, the database `make run` uses: a new user's first look.

The suite runs on PostgreSQL; reads written as SQL of their own (a raw cursor skips Django's
field converters: SQLite answers timestamps as text) must still answer on SQLite.
"""

import pytest

from tests.sqlite_script import run_on_sqlite

_SCRIPT = """
import django
django.setup()
from django.core.management import call_command
from django.test import Client
call_command("migrate", verbosity=0)
call_command("seed_history", endpoints=3, days=3, workloads=2, slots=3, samples_per_run=3)
client = Client(raise_request_exception=False)
paths = [
    "/", "/?window=72h", "/?window=7d", "/?window=30d", "/?window=365d&sort=decode",
    "/endpoints/synthetic-001/", "/endpoints/synthetic-001/?window=365d",
    "/compare/?e=synthetic-001&e=synthetic-002", "/compare/?e=synthetic-001&window=90d",
    "/runs/", "/price/", "/agent-loop/?window=30d", "/alerts/", "/advisor/",
    "/api/v1/leaderboard/", "/api/v1/leaderboard/?window=365d", "/api/v1/agent-loop/",
    "/api/v1/endpoints/synthetic-001/history/?window=30d", "/api/v1/runs/",
]
for path in paths:
    print("STATUS", client.get(path, HTTP_HOST="localhost").status_code, path)
"""


@pytest.mark.slow
def test_every_page_and_read_answers_on_sqlite_once_runs_have_finished(tmp_path):
    secret = "a-test-secret-" + "x" * 40  # noqa: S105 (a test's own)
    done = run_on_sqlite(_SCRIPT, tmp_path, SECRET_KEY=secret, TOKSPEED_PUBLIC_DASHBOARD="1")
    answers = [
        line.split(maxsplit=2)[1:]
        for line in done.stdout.splitlines()
        if line.startswith("STATUS ")
    ]
    assert len(answers) == 19, done.stdout[-2000:]
    failed = [(code, path) for code, path in answers if code != "200"]
    assert not failed, (failed, done.stderr[-3000:])
