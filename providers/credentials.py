"""What a credential looks like, so none is ever stored: one check for the admin and the API.

Keys live only in the workers' environment; a provider holds the variable's *name*. Extra
headers are for harmless options (a version header, a beta flag), never for a key or a cookie.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError

# Field and header names that carry a secret: api_key, apiKey, x-api-key, token, access_token,
# secret, password, authorization, cookie... (but not api_key_env or max_tokens).
_SECRET_NAME = re.compile(
    r"(^|[_\-])(api[_\-]?key|key|token|access[_\-]?token|secret|secret[_\-]?key|password|"
    r"passwd|authorization|bearer|credentials?|cookie|session)$",
    re.IGNORECASE,
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Headers that carry credentials however they are spelt (compared lower-case).
CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "x-auth-token",
        "x-amz-security-token",
    }
)
# Values that are credentials whatever the header is called: an auth scheme, or a provider key.
_CREDENTIAL_VALUE = re.compile(
    r"^\s*((bearer|basic|token|digest)\s+\S"
    r"|(sk|pk|rk|gsk|xai|hf|nvapi|pplx|r8|sk-ant|sk-proj)[-_][A-Za-z0-9_\-]{16,}"
    r"|AIza[A-Za-z0-9_\-]{30,})",
    re.IGNORECASE,
)
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(_CAMEL.sub("_", str(name))))


def is_credential_header(name: str, value: str) -> bool:
    lowered = name.lower()
    return (
        lowered in CREDENTIAL_HEADERS
        or is_secret_name(lowered)
        or "auth" in lowered
        or "api-key" in lowered
        or "cookie" in lowered
        or bool(_CREDENTIAL_VALUE.match(value))
    )


def is_credential_value(value: Any) -> bool:
    """A string that is a credential whatever it is filed under (`{"user": "sk-…"}`)."""
    return isinstance(value, str) and bool(_CREDENTIAL_VALUE.match(value))


MASK = "•••• (credential hidden)"


def mask_credentials(value: Any) -> Any:
    """`value` (nested JSON) with every credential-looking string replaced by MASK."""
    if isinstance(value, Mapping):
        return {name: mask_credentials(item) for name, item in value.items()}
    if isinstance(value, list):
        return [mask_credentials(item) for item in value]
    return MASK if is_credential_value(value) else value


def where_keys_go(env_name: str = "") -> str:
    target = f"the variable {env_name}" if env_name else "an environment variable"
    return (
        "API keys and other credentials are never stored by tokspeed. Export the key as "
        f"{target} on the workers and set api_key_env (the admin's API key variable) to its "
        "name."
    )


def validate_extra_headers(headers: Any, *, env_name: str = "") -> None:
    """A flat object of valid header names to single-line strings, none of them a credential."""
    if not isinstance(headers, Mapping):
        raise ValidationError("Give an object of header names to values.")
    for name, value in headers.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            raise ValidationError(f"{name!r} is not a valid header name.")
        if not isinstance(value, str) or any(ch in value for ch in "\r\n\x00"):
            raise ValidationError(f"{name}: give a single-line text value.")
        if is_credential_header(name, value):
            raise ValidationError(f"{name}: {where_keys_go(env_name)}")


def without_credentials(headers: Any) -> dict[str, str]:
    """The harmless headers of a stored object (what a migration keeps of older rows)."""
    if not isinstance(headers, Mapping):
        return {}
    return {
        str(name): str(value)
        for name, value in headers.items()
        if not is_credential_header(str(name), str(value))
    }
