"""Keep API keys out of tokspeed: refuse them in request bodies, headers, JSON options and URLs.

Keys live only in the environment of the workers; the database and the API hold the *name* of the
variable (Provider.api_key_env). A caller who sends a key gets a 400 that says where it belongs.
"""

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from rest_framework.exceptions import ValidationError

# Field names that carry a secret: api_key, apiKey, x-api-key, token, access_token, secret,
# password, authorization... (but not api_key_env, max_tokens or max_tokens_field).
_SECRET_NAME = re.compile(
    r"(^|[_\-])(api[_\-]?key|key|token|access[_\-]?token|secret|secret[_\-]?key|password|"
    r"passwd|authorization|bearer|credentials?|cookie)$",
    re.IGNORECASE,
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Header values that are credentials whatever the header is called.
_CREDENTIAL_VALUE = re.compile(r"^\s*(bearer|basic|token)\s+\S", re.IGNORECASE)
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(_CAMEL.sub("_", str(name))))


def where_keys_go(env_name: str) -> str:
    target = f"the variable {env_name}" if env_name else "an environment variable"
    return (
        "API keys are never accepted by tokspeed's API. Export the key as "
        f"{target} on the workers and set api_key_env to the variable's name."
    )


def refuse_secret_fields(data: Any, env_name: str) -> None:
    """A 400 naming each top-level body field that looks like a key.

    The check_* functions below raise field-less errors: they run as field validators."""
    if not isinstance(data, Mapping):
        return
    bad = [name for name in data if is_secret_name(name)]
    if bad:
        raise ValidationError({name: [where_keys_go(env_name)] for name in bad})


def check_json(value: Any, *, env_name: str = "", path: str = "") -> None:
    """Nested JSON options: no key-like names anywhere and no NUL characters (PostgreSQL refuses
    them in jsonb)."""
    if isinstance(value, Mapping):
        for name, item in value.items():
            where = f"{path}.{name}" if path else str(name)
            if "\x00" in str(name):
                raise ValidationError(f"{where}: null characters are not allowed.")
            if is_secret_name(name):
                raise ValidationError(f"{where}: {where_keys_go(env_name)}")
            check_json(item, env_name=env_name, path=where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_json(item, env_name=env_name, path=f"{path}[{index}]")
    elif isinstance(value, str) and "\x00" in value:
        raise ValidationError(f"{path or 'value'}: null characters are not allowed.")


def check_headers(headers: Any, *, env_name: str) -> dict[str, str]:
    """Extra request headers: a flat object of valid names to strings, none of them a credential."""
    if not isinstance(headers, Mapping):
        raise ValidationError("Give an object of header names to values.")
    for name, value in headers.items():
        if not _HEADER_NAME.match(name):
            raise ValidationError(f"{name!r} is not a valid header name.")
        if not isinstance(value, str) or any(ch in value for ch in "\r\n\x00"):
            raise ValidationError(f"{name}: give a single-line text value.")
        lowered = name.lower()
        if (
            is_secret_name(lowered)
            or "auth" in lowered
            or "api-key" in lowered
            or _CREDENTIAL_VALUE.match(value)
        ):
            raise ValidationError(f"{name}: {where_keys_go(env_name)}")
    return dict(headers)


def check_url(url: str, *, env_name: str) -> None:
    """No `?key=` (Gemini style) or other credential parameters in a base URL."""
    query = urlsplit(url).query
    if any(is_secret_name(name) for name, _ in parse_qsl(query, keep_blank_values=True)):
        raise ValidationError(where_keys_go(env_name))
