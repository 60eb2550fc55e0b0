"""How the measuring client reaches a provider: proxy, CA bundle, and which addresses it may use.

Everything here is decided before any clock starts: the proxy for an origin, the TLS context
(loading a CA bundle takes ~0.2 s, so it is built once per bundle and never inside a TTFT), and
the rule for private addresses, which is checked on the addresses a connection really uses (a
host name that resolves to 127.0.0.1 today is refused even if it was public when it was saved).
"""

from __future__ import annotations

import os
import ssl
import urllib.request
from dataclasses import dataclass
from functools import cache

import httpx

from providers.validators import is_private


class AddressRefused(httpx.ConnectError):
    """The target resolves to an address that endpoints may not use (private, loopback…)."""


@dataclass(frozen=True, slots=True)
class Network:
    """The network settings of one client.

    proxy: None = the environment's HTTPS_PROXY / HTTP_PROXY / NO_PROXY (upper or lower case);
    "" = connect directly; else a proxy URL (http://[user:password@]host:port) for every origin.
    ca_bundle: a PEM file of CA certificates ("" = SSL_CERT_FILE / SSL_CERT_DIR, else certifi).
    allow_private: connect to private, loopback and link-local addresses (local servers).
    """

    proxy: str | None = None
    ca_bundle: str = ""
    allow_private: bool = True

    def proxy_for(self, scheme: str, host: str) -> httpx.URL | None:
        """The proxy to tunnel through to (scheme, host), or None for a direct connection."""
        if self.proxy is not None:
            return httpx.URL(self.proxy) if self.proxy else None
        if urllib.request.proxy_bypass_environment(host):
            return None
        proxies = urllib.request.getproxies_environment()
        chosen = proxies.get(scheme) or proxies.get("all")
        if not chosen:
            return None
        return httpx.URL(chosen if "://" in chosen else f"http://{chosen}")

    def ssl_context(self) -> ssl.SSLContext:
        env = os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR") or ""
        return tls_context(self.ca_bundle or env)

    def check_address(self, host: str, address: str) -> None:
        """Raise AddressRefused when `address` (an IP) is not allowed; says nothing secret."""
        if self.allow_private or not is_private(address):
            return
        raise AddressRefused(f"refused: {host} resolves to a private or loopback address")


@cache
def tls_context(ca_bundle: str = "") -> ssl.SSLContext:
    """Verification with `ca_bundle` (a PEM file or a folder of them), else certifi's bundle."""
    if ca_bundle and os.path.isdir(ca_bundle):
        context = ssl.create_default_context(capath=ca_bundle)
    elif ca_bundle:
        context = ssl.create_default_context(cafile=ca_bundle)
    else:
        context = httpx.create_ssl_context(trust_env=False)
    context.set_alpn_protocols(["http/1.1"])
    return context
