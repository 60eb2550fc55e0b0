"""Files and folders tokspeed keeps on this machine, made when a process starts, never on import.

The launcher (`manage.py up`) makes the var folder and the per-install secret; a Celery process
makes the embedded broker's folders when it configures itself, and beat its schedule's folder.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterable
from pathlib import Path

from .env import envbool

BASE_DIR = Path(__file__).resolve().parent.parent
MISSING_KEY_LINE = (
    "tokspeed: SECRET_KEY is not set: export SECRET_KEY=<a long random string> "
    "(or DEBUG=1 for a per-install secret in var/secret_key)"
)

# The filesystem broker's transport options that name folders.
BROKER_FOLDER_OPTIONS = ("data_folder_in", "data_folder_out", "control_folder", "processed_folder")


def ensure_secret(path: Path) -> None:
    """A per-install secret (mode 600) for installs without SECRET_KEY in the environment."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.write_text(secrets.token_urlsafe(50))


def var_dir() -> Path:
    """Where this install keeps its SQLite database, beat schedule and per-install secret."""
    return Path(os.environ.get("TOKSPEED_VAR_DIR", BASE_DIR / "var"))


def secret_path() -> Path:
    return var_dir() / "secret_key"


def settle_secret() -> None:
    """What every entry point (manage.py, wsgi.py, Celery) does before Django reads settings.

    With DEBUG on and no SECRET_KEY in the environment, make (once) or read the per-install
    secret, the same one `manage.py up` uses. Without DEBUG nothing is made here: settings read
    a secret `manage.py up` made earlier, and a system check (tokspeed.checks) refuses to start
    when there is none (Django would answer every request with a 500).
    """
    if not os.environ.get("SECRET_KEY") and envbool("DEBUG", False):
        ensure_secret(secret_path())


# gunicorn's arbiter halts when a worker exits with this status ("App failed to load."); on any
# other it starts another worker, for ever, with the port open and every request left waiting.
APP_LOAD_ERROR = 4


def require_secret() -> None:
    """A server's start-up (wsgi.py): settle the secret, or stop with one line naming SECRET_KEY."""
    settle_secret()
    if not os.environ.get("SECRET_KEY") and not secret_path().exists():
        print(MISSING_KEY_LINE, file=sys.stderr, flush=True)
        raise SystemExit(APP_LOAD_ERROR)


def broker_folders(transport_options: dict) -> list[Path]:
    return [
        Path(transport_options[key]) for key in BROKER_FOLDER_OPTIONS if transport_options.get(key)
    ]


def ensure_folders(folders: Iterable[Path]) -> None:
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
