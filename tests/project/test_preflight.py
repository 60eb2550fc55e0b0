"""`make test`'s preflight (bin/test-preflight): names what is missing within a second, with
the one command that installs it."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

PREFLIGHT = Path(__file__).resolve().parents[2] / "bin" / "test-preflight"
# What the script itself needs; the services' tools are left out to play a bare machine.
BASICS = ("bash", "seq", "sleep", "ls", "id", "sort", "tail", "sudo", "cat")


def preflight(path: str, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = subprocess.run(
        [shutil.which("bash") or "/bin/bash", str(PREFLIGHT)],
        capture_output=True,
        text=True,
        timeout=90,
        env={"PATH": path, **env},
    )
    return result, time.monotonic() - started


def test_it_names_every_missing_service_and_its_install_line_within_a_second(
    tmp_path: Path,
) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in BASICS:
        if found := shutil.which(tool):
            (bare / tool).symlink_to(found)

    result, took = preflight(str(bare), TOKSPEED_CHROMIUM=str(tmp_path / "no-chromium"))

    assert result.returncode == 1 and took < 1.0
    assert "PostgreSQL is not installed" in result.stderr
    assert (
        "Redis is not installed" in result.stderr and "Chromium is not installed" in result.stderr
    )
    assert "install with:  sudo apt-get install -y postgresql redis-server chromium" in (
        result.stderr
    )
