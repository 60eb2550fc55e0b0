"""OAuth2 bearer tokens for Azure (Microsoft Entra ID) and Google Cloud (Vertex AI).

Tokens come from the vendors' own libraries reading the worker's environment: azure-identity's
DefaultAzureCredential (AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_CLIENT_SECRET, workload identity,
managed identity, the Azure CLI login) and google-auth's application default credentials
(GOOGLE_APPLICATION_CREDENTIALS service-account file, gcloud ADC, the metadata server). Each
token is cached per process and refreshed REFRESH_MARGIN_S before it expires, so a refresh never
falls inside a measured request; a token the server refuses (401) is dropped by `invalidate`.
The token only ever goes into the Authorization header.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC

from .base import RequestSpec

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
REFRESH_MARGIN_S = 300.0  # refresh five minutes before expiry: a run never holds a dying token

# azure-identity logs each token request at INFO; tokspeed logs nothing about credentials.
logging.getLogger("azure.identity").setLevel(logging.WARNING)
logging.getLogger("azure.core").setLevel(logging.WARNING)

# fetch() -> (token, expires at in Unix seconds)
Fetch = Callable[[], tuple[str, float]]


class BearerToken:
    """A cached access token from `fetch`, refreshed before it expires."""

    def __init__(self, fetch: Fetch, *, clock: Callable[[], float] = time.time) -> None:
        self._fetch = fetch
        self._clock = clock
        self._lock = threading.Lock()
        self._token = ""
        self._expires_at = 0.0

    def token(self) -> str:
        with self._lock:
            if not self._token or self._clock() >= self._expires_at - REFRESH_MARGIN_S:
                self._token, self._expires_at = self._fetch()
            return self._token

    def headers(self, spec: RequestSpec) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token()}"}

    def invalidate(self) -> None:
        with self._lock:
            self._token, self._expires_at = "", 0.0


def azure_fetch() -> Fetch:
    """Entra ID tokens for Azure OpenAI / AI Foundry from DefaultAzureCredential."""
    from azure.identity import DefaultAzureCredential  # noqa: PLC0415 - heavy, only when used

    credential = DefaultAzureCredential()

    def fetch() -> tuple[str, float]:
        token = credential.get_token(AZURE_SCOPE)
        return token.token, float(token.expires_on)

    return fetch


def google_fetch() -> Fetch:
    """Vertex AI access tokens from google-auth's application default credentials."""
    import google.auth  # noqa: PLC0415 - heavy, only when used
    from google.auth.transport.requests import Request  # noqa: PLC0415

    credentials, _project = google.auth.default(scopes=[GOOGLE_SCOPE])

    def fetch() -> tuple[str, float]:
        credentials.refresh(Request())
        expiry = credentials.expiry  # naive UTC, as google-auth keeps it
        if expiry is None:
            return credentials.token, time.time() + 3600
        return credentials.token, expiry.replace(tzinfo=UTC).timestamp()

    return fetch


_CACHE: dict[str, BearerToken] = {}
_CACHE_LOCK = threading.Lock()


def shared_token(kind: str) -> BearerToken:
    """The process's one cached token source for "azure" or "google" (built on first use)."""
    with _CACHE_LOCK:
        if kind not in _CACHE:
            fetch = {"azure": azure_fetch, "google": google_fetch}[kind]
            _CACHE[kind] = BearerToken(_lazy(fetch))
        return _CACHE[kind]


def _lazy(make: Callable[[], Fetch]) -> Fetch:
    """Build the vendor credential on the first fetch, not when a config is assembled."""
    made: list[Fetch] = []

    def fetch() -> tuple[str, float]:
        if not made:
            made.append(make())
        return made[0]()

    return fetch


def forget_tokens() -> None:
    """Drop every cached token source (tests change the environment between cases)."""
    with _CACHE_LOCK:
        _CACHE.clear()
