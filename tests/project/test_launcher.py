"""`manage.py up` on a fresh data folder: everything starts, a first round runs, Ctrl-C stops
every process it started. Embedded defaults: SQLite and the filesystem broker."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from tests.celery_helpers import REPO, wait_for

pytestmark = pytest.mark.slow

RUNNING = re.compile(r"tokspeed is running: (http://\S+)")
STARTED = re.compile(r"started (\w+) \(pid (\d+)\)")


def process_groups() -> dict[int, int]:
    """pid → process group of every live process (from /proc)."""
    groups = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":  # zombies are already dead
            groups[int(stat.parent.name)] = int(fields[2])
    return groups


def test_it_runs_everything_and_stops_everything_on_ctrl_c(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env |= {"TOKSPEED_VAR_DIR": str(tmp_path), "PYTHONUNBUFFERED": "1", "DEBUG": "1"}  # make run
    up = subprocess.Popen(
        [sys.executable, "manage.py", "up", "--port", "0", "--workers", "1"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(up.stdout), daemon=True).start()
    everything = lambda: "".join(lines)  # noqa: E731
    output = lambda: everything()[-4000:]  # noqa: E731 - a message for failures
    try:
        url = wait_for(
            lambda: next((m.group(1) for line in lines if (m := RUNNING.search(line))), None),
            timeout=120,
            message=output,
        )
        children = {m.group(1): int(m.group(2)) for line in lines if (m := STARTED.search(line))}
        assert set(children) == {"simulator", "central", "exports", "worker", "beat", "web"}
        # 60 s: the web server's first request loads the URLconf, slow on a busy machine.
        assert httpx.get(url + "admin/login/", timeout=60).status_code == 200
        # The simulator's port (9100 or the next free one) and where alert emails go, printed.
        sim_port = int(re.search(r"simulator: http://127\.0\.0\.1:(\d+)", everything()).group(1))
        assert 9100 <= sim_port < 9200
        assert f"alert emails are written to {tmp_path / 'mail'}/" in everything()
        assert httpx.get(url + "debug/mail/", timeout=60).status_code == 200

        db = sqlite3.connect(tmp_path / "tokspeed.sqlite3")
        enabled, simulated = db.execute(
            "SELECT count(*), sum(p.simulated) FROM providers_endpoint e JOIN providers_provider p"
            " ON e.provider_id = p.id WHERE e.enabled AND p.enabled"
        ).fetchone()
        # The whole output: under load the workers' start-up lines push it out of the last 4,000.
        assert simulated > 0 and f"first round: {enabled} runs queued" in everything(), output()
        done = wait_for(
            lambda: db.execute(
                "SELECT r.id FROM benchmarks_run r JOIN benchmarks_sample s ON s.run_id = r.id "
                "WHERE r.status = 'done' AND s.output_tokens > 0"
            ).fetchone(),
            timeout=90,
            message=output,
            interval=0.5,
        )
        assert done
        db.close()
    finally:
        up.send_signal(signal.SIGINT)  # what Ctrl-C in its terminal does
        code = up.wait(timeout=60)
    assert code == 0, output()
    assert "[tokspeed] stopped" in output()
    left = {pid: group for pid, group in process_groups().items() if group in children.values()}
    assert left == {}  # no child, and no child's child (the worker's pool), survives
