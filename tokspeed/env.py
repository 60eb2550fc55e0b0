"""Tiny helpers to read settings from the environment.

A value that cannot be read stops start-up with a message naming the variable: a typo such as
`TOKSPEED_PUBLIC_DASHBOARD=ture` must not silently mean "off".
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    word = value.strip().lower()
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a boolean: use one of {', '.join(sorted(TRUE | FALSE))}."
    )


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number.") from None


def envfloat(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number.") from None


def envlist(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def read_secret(path: Path) -> str:
    """The per-install secret the launcher keeps in a file; "" when there is none (yet).

    Reading settings never creates it: `manage.py up` does, when it starts (tokspeed/state.py).
    """
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""
