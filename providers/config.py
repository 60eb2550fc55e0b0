"""Turn a registered Endpoint (or ad-hoc flags) into the plain EndpointConfig adapters use.

The API key is read from the environment at call time and lives only in the returned object;
it is never stored, logged, or put in an error message (MissingKey names the variable only).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError

from .base import EndpointConfig
from .models import validate_env_name
from .registry import ADAPTERS
from .validators import validate_base_url

if TYPE_CHECKING:
    from .models import Endpoint


class MissingKey(Exception):
    """The provider's key variable is not set (or empty) in this process's environment."""

    def __init__(self, variable: str, provider: str = "") -> None:
        self.variable = variable
        target = f" for {provider}" if provider else ""
        super().__init__(f"Set the environment variable {variable} to the API key{target}.")


def read_key(variable: str, provider: str = "") -> str | None:
    """The key held by `variable`; None when no variable is configured (keyless local servers)."""
    if not variable:
        return None
    value = os.environ.get(variable, "").strip()
    if not value:
        raise MissingKey(variable, provider)
    return value


def endpoint_config(endpoint: Endpoint) -> EndpointConfig:
    """Everything needed to stream from `endpoint`; raises MissingKey if its key is unset."""
    provider = endpoint.provider
    return EndpointConfig(
        base_url=provider.base_url,
        protocol=provider.protocol,
        model=endpoint.model,
        api_key=read_key(provider.api_key_env, provider.name),
        extra_headers={str(k): str(v) for k, v in (provider.extra_headers or {}).items()},
        max_tokens_field=endpoint.max_tokens_field,
        reasoning_effort=endpoint.reasoning_effort,
        extra_body=dict(endpoint.extra_body or {}),
    )


def adhoc_config(
    *, base_url: str, protocol: str, model: str, api_key_env: str = ""
) -> EndpointConfig:
    """An EndpointConfig from command-line flags, validated like a registered provider.

    Raises ValidationError (bad URL, protocol, model or variable name) or MissingKey.
    """
    if protocol not in ADAPTERS:
        raise ValidationError(
            f"Unknown protocol {protocol!r}; choose one of {', '.join(sorted(ADAPTERS))}."
        )
    if not model.strip():
        raise ValidationError("Give a model id.")
    validate_base_url(base_url)
    validate_env_name(api_key_env)
    return EndpointConfig(
        base_url=base_url,
        protocol=protocol,
        model=model.strip(),
        api_key=read_key(api_key_env),
    )
