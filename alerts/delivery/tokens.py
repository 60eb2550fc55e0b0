"""Signed links in emails: they work without logging in, cannot be forged, and expire.

An unsubscribe link names an address; a confirmation link names a subscription and the address
it was made for (so changing the address voids it). Both expire after their setting's days.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core import signing

from alerts.delivery.recipients import normal

UNSUBSCRIBE_SALT = "alerts.unsubscribe"
CONFIRM_SALT = "alerts.confirm"


class LinkExpired(Exception):
    """The link was ours, but it is older than its lifetime."""


def _load(token: str, *, salt: str, max_age_days: int) -> dict | None:
    try:
        data = signing.loads(token, salt=salt, max_age=timedelta(days=max_age_days))
    except signing.SignatureExpired:
        raise LinkExpired from None
    except signing.BadSignature:
        return None
    return data if isinstance(data, dict) else None


def unsubscribe_token(email: str) -> str:
    return signing.dumps({"email": normal(email)}, salt=UNSUBSCRIBE_SALT, compress=True)


def email_from_token(token: str) -> str | None:
    """The address a token was made for; None if altered or not ours; LinkExpired if too old."""
    data = _load(token, salt=UNSUBSCRIBE_SALT, max_age_days=settings.ALERTS_LINK_MAX_AGE_DAYS)
    email = data.get("email") if data else None
    return email if isinstance(email, str) and "@" in email else None


def confirm_token(subscription_id: int, email: str) -> str:
    return signing.dumps({"s": subscription_id, "email": normal(email)}, salt=CONFIRM_SALT)


def subscription_from_token(token: str) -> tuple[int, str] | None:
    """(subscription id, address) of a confirmation link; None if altered; LinkExpired."""
    data = _load(token, salt=CONFIRM_SALT, max_age_days=settings.ALERTS_CONFIRM_MAX_AGE_DAYS)
    if not data or not isinstance(data.get("s"), int) or not isinstance(data.get("email"), str):
        return None
    return data["s"], data["email"]
