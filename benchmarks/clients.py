"""The one way to get a client that talks to a provider: scheduled runs, the breaker's probe,
"Test connection" and `speedtest ENDPOINT` all come here.

Every client gets the provider's network settings, including the private-address rule, which
the transport applies at connect time to the address actually connected to (a name that
resolves to a public address when saved and to loopback later, DNS rebinding, is refused).
"""

from __future__ import annotations

import os

import httpx
from django.conf import settings

from providers.models import Provider

from .measure import Limits, Network, make_client


def network_for(provider: Provider | None) -> Network:
    """How workers reach `provider`: its proxy variable (else the standard proxy variables),
    its CA bundle, and whether private addresses are allowed (checked at every connect)."""
    allow_private = settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS
    if provider is None:
        return Network(allow_private=allow_private)
    proxy = os.environ.get(provider.proxy_env, "").strip() if provider.proxy_env else None
    return Network(proxy=proxy, ca_bundle=provider.ca_bundle, allow_private=allow_private)


def provider_client(
    provider: Provider | None, *, limits: Limits, max_connections: int
) -> httpx.AsyncClient:
    """A measuring client for `provider` (None: an ad hoc URL, under the same rules)."""
    return make_client(
        limits=limits, max_connections=max_connections, network=network_for(provider)
    )
