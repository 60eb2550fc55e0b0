"""How workers and `speedtest` reach a provider: proxy, CA bundle, private addresses.

Its own module so that `speedtest` reads it without importing the runner (and with it the
finishing, rollup and Celery modules a one-off measurement never uses).
"""

from __future__ import annotations

import os

from django.conf import settings

from providers.models import Provider

from .measure import Network


def network_for(provider: Provider | None) -> Network:
    """How workers reach `provider`: its proxy variable (else the standard proxy variables),
    its CA bundle, and whether private addresses are allowed (checked at every connect)."""
    allow_private = settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS
    if provider is None:
        return Network(allow_private=allow_private)
    proxy = os.environ.get(provider.proxy_env, "").strip() if provider.proxy_env else None
    return Network(proxy=proxy, ca_bundle=provider.ca_bundle, allow_private=allow_private)
