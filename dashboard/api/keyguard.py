"""Keep API keys out of tokspeed: refuse them in request bodies, headers, JSON options and URLs.

Keys live only in the environment of the workers; the database and the API hold the *name* of the
variable (Provider.api_key_env). A caller who sends a key gets a 400 that says where it belongs.
"""

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework.exceptions import ValidationError

from providers.credentials import (
    is_credential_value,
    is_secret_name,
    validate_extra_headers,
)


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
    elif is_credential_value(value):  # the header rule, applied to values: {"user": "sk-…"}
        raise ValidationError(f"{path or 'value'}: {where_keys_go(env_name)}")


def check_headers(headers: Any, *, env_name: str) -> dict[str, str]:
    """Extra request headers: the providers' own check (the admin runs the same one)."""
    try:
        validate_extra_headers(headers, env_name=env_name)
    except DjangoValidationError as error:
        raise ValidationError(error.messages) from None
    return dict(headers)


def check_url(url: str, *, env_name: str) -> None:
    """No `?key=` (Gemini style) or other credential parameters in a base URL."""
    query = urlsplit(url).query
    if any(is_secret_name(name) for name, _ in parse_qsl(query, keep_blank_values=True)):
        raise ValidationError(where_keys_go(env_name))
