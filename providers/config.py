"""Turn a registered Endpoint (or ad-hoc flags) into the plain EndpointConfig adapters use.

The API key is read from the environment at call time and lives only in the returned object;
it is never stored, logged, or put in an error message (MissingKey names the variable only).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError

from .base import Credential, EndpointConfig
from .cloud_auth import shared_token
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


def credential_for(protocol: str, *, api_key_env: str, base_url: str) -> Credential | None:
    """The cloud credential a provider without a key variable uses (names only, read lazily).

    Azure: a Microsoft Entra ID token; Vertex AI: a Google OAuth2 token; Bedrock: SigV4 with
    botocore's credential chain. With a key variable, the key is sent as the protocol's key.
    """
    if api_key_env:
        return None
    if protocol.startswith("azure_openai"):
        return shared_token("azure")
    if protocol.startswith("vertex_"):
        return shared_token("google")
    if protocol == "bedrock_converse":
        from .aws_auth import SigV4Credential, region_of  # botocore: only for Bedrock

        return SigV4Credential(region_of(base_url))
    return None


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
        lane=endpoint.lane,
        credential=credential_for(
            provider.protocol, api_key_env=provider.api_key_env, base_url=provider.base_url
        ),
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
        credential=credential_for(protocol, api_key_env=api_key_env, base_url=base_url),
    )
