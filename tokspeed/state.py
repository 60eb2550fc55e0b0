"""Files and folders tokspeed keeps on this machine, made when a process starts, never on import.

The launcher (`manage.py up`) makes the var folder and the per-install secret; a Celery process
makes the embedded broker's folders when it configures itself, and beat its schedule's folder.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from pathlib import Path

# The filesystem broker's transport options that name folders.
BROKER_FOLDER_OPTIONS = ("data_folder_in", "data_folder_out", "control_folder", "processed_folder")


def ensure_secret(path: Path) -> None:
    """A per-install secret (mode 600) for installs without SECRET_KEY in the environment."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.write_text(secrets.token_urlsafe(50))


def broker_folders(transport_options: dict) -> list[Path]:
    return [
        Path(transport_options[key]) for key in BROKER_FOLDER_OPTIONS if transport_options.get(key)
    ]


def ensure_folders(folders: Iterable[Path]) -> None:
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
