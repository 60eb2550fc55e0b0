"""A channel's address (webhook URL, routing key, API key) and signing secret, encrypted at rest.

Fernet (AES-128-CBC + HMAC-SHA256) with settings.CHANNELS_KEY (TOKSPEED_CHANNELS_KEY in the
environment) or, without it, a key derived from SECRET_KEY. Or the channel names an environment
variable that holds the address. Shown back only as a hint: the service and the last 4 characters.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from typing import TYPE_CHECKING

from django.conf import settings

from alerts.models import Channel

if TYPE_CHECKING:
    from cryptography.fernet import Fernet


class SecretMissing(Exception):
    """The channel's address cannot be read: unset variable, or encrypted with another key."""


def _fernet() -> Fernet:
    # Imported on first use: the admin loads this module in every process (speedtest, workers),
    # and cryptography's bindings cost ~12 ms and a few MB that a plain run never needs.
    from cryptography.fernet import Fernet

    key = settings.CHANNELS_KEY
    if not key:
        digest = hashlib.sha256(f"tokspeed.channels:{settings.SECRET_KEY}".encode()).digest()
        key = base64.urlsafe_b64encode(digest).decode()
    return Fernet(key)


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    from cryptography.fernet import InvalidToken

    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise SecretMissing(
            "encrypted with another key (was TOKSPEED_CHANNELS_KEY changed?)"
        ) from None


def hint(value: str) -> str:
    """Enough to recognise, never enough to use: '…' and the last 4 characters."""
    value = value.strip()
    return f"…{value[-4:]}" if len(value) > 12 else "…"


def set_address(channel: Channel, value: str) -> None:
    channel.secret_encrypted = encrypt(value.strip())
    channel.secret_hint = hint(value)
    channel.secret_env = ""


def address(channel: Channel) -> str:
    if channel.secret_env:
        value = os.environ.get(channel.secret_env, "").strip()
        if not value:
            raise SecretMissing(f"environment variable {channel.secret_env} is not set")
        return value
    if not channel.secret_encrypted:
        raise SecretMissing("no address stored")
    return decrypt(channel.secret_encrypted)


def new_signing_secret(channel: Channel) -> str:
    """A fresh HMAC secret (shown once, when it is made); stored encrypted."""
    value = "whsec_" + secrets.token_urlsafe(32)
    channel.signing_secret_encrypted = encrypt(value)
    return value


def signing_secret(channel: Channel) -> str:
    if not channel.signing_secret_encrypted:
        raise SecretMissing("no signing secret")
    return decrypt(channel.signing_secret_encrypted)
