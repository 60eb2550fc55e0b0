"""`make run` installs requirements.txt the first time (and when it changes), not at each start,
as the README says."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.celery_helpers import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def planned(venv: Path) -> str:
    """What `make venv` would run for this virtual environment (make -n: nothing runs)."""
    done = subprocess.run(
        ["make", "-n", "venv", f"VENV={venv}"], cwd=REPO, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return done.stdout


def test_requirements_are_installed_once_and_again_when_they_change(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    assert "pip install --quiet -r requirements.txt" in planned(venv)  # the first time

    stamp = venv / ".requirements-installed"
    stamp.touch()
    later = (REPO / "requirements.txt").stat().st_mtime + 60
    os.utime(stamp, (later, later))
    assert "pip install" not in planned(venv)  # installed since requirements.txt last changed

    earlier = later - 120
    os.utime(stamp, (earlier, earlier))
    assert "pip install --quiet -r requirements.txt" in planned(venv)  # it changed since
