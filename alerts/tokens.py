"""Signed unsubscribe tokens: an email's link works without logging in, and cannot be forged."""

from __future__ import annotations

from django.core import signing

from .recipients import normal

SALT = "alerts.unsubscribe"


def unsubscribe_token(email: str) -> str:
    return signing.dumps({"email": normal(email)}, salt=SALT, compress=True)


def email_from_token(token: str) -> str | None:
    """The address a token was made for; None if the token was altered or is not ours."""
    try:
        data = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return None
    email = data.get("email") if isinstance(data, dict) else None
    return email if isinstance(email, str) and "@" in email else None
