"""Run a Python script against a fresh SQLite install (`make run`'s database) in a process of
its own: the test process is set up on PostgreSQL, and Django sets up one database a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_on_sqlite(script: str, var_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The script's run (stdout, stderr, return code) with DEBUG on, no DATABASE_URL (so the
    SQLite file under `var_dir`) and `env` added; fails the test if SQLite was not used."""
    environ = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    environ |= {"TOKSPEED_VAR_DIR": str(var_dir), "DEBUG": "1", **env}
    environ["DJANGO_SETTINGS_MODULE"] = "tokspeed.settings"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=environ, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert (var_dir / "tokspeed.sqlite3").exists(), "the script did not use SQLite"
    return done
