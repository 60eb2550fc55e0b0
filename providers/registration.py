"""Register catalogue providers and the simulated demo providers (idempotent services)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

import httpx
from django.db import transaction
from django.utils.text import slugify

from .catalogue import HOSTED, LOCAL, PRICE_NOTE, KnownEndpoint, KnownProvider
from .cloud_catalogue import CLOUD
from .models import Endpoint, Provider
from .validators import validate_base_url

LOCAL_DISCOVERY_TIMEOUT_S = 3.0
LOCAL_MAX_MODELS = 20


@dataclass
class Registered:
    """What a registration did, for the command's report."""

    enabled: list[Provider] = field(default_factory=list)
    disabled: list[Provider] = field(default_factory=list)  # key variable not set
    endpoints_created: int = 0
    notes: list[str] = field(default_factory=list)


def endpoint_slug(provider_slug: str, model: str) -> str:
    base = slugify(f"{provider_slug}-{model.replace('/', '-').replace('.', '-')}")
    return base[:120].rstrip("-")


def _endpoint(provider: Provider, known: KnownEndpoint, *, price_note: str = PRICE_NOTE) -> bool:
    """Create the endpoint if missing (an admin's edits to an existing one are kept)."""
    price_in, price_out = known.prices
    _, created = Endpoint.objects.get_or_create(
        provider=provider,
        model=known.model,
        defaults={
            "slug": endpoint_slug(provider.slug, known.model),
            "display_name": known.display_name,
            "price_input_per_mtok": price_in,
            "price_output_per_mtok": price_out,
            "price_note": price_note if price_in is not None else "",
            "reasoning_effort": known.reasoning_effort,
            "max_tokens_field": known.max_tokens_field,
            "extra_body": known.extra_body,
        },
    )
    return created


@transaction.atomic
def register_hosted(result: Registered) -> None:
    """Every hosted provider; enabled exactly when its key variable is set in this environment."""
    for known in HOSTED:
        provider, _ = Provider.objects.get_or_create(
            slug=known.slug,
            defaults={
                "name": known.name,
                "protocol": known.protocol,
                "base_url": known.base_url,
                "api_key_env": known.api_key_env,
                "enabled": False,
            },
        )
        # The variable named on the row (an admin may have renamed it) decides.
        has_key = bool(os.environ.get(provider.api_key_env or known.api_key_env, "").strip())
        if provider.enabled != has_key:
            provider.enabled = has_key
            provider.save(update_fields=["enabled"])
        (result.enabled if has_key else result.disabled).append(provider)
        result.endpoints_created += sum(_endpoint(provider, e) for e in known.endpoints)


def discover_models(base_url: str) -> list[str]:
    """Model ids served by an OpenAI-compatible server (GET /models); [] if it cannot tell."""
    try:
        response = httpx.get(base_url.rstrip("/") + "/models", timeout=LOCAL_DISCOVERY_TIMEOUT_S)
        response.raise_for_status()
        data = response.json().get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return []
    ids = [m.get("id") for m in data if isinstance(m, dict)]
    return [i for i in ids if isinstance(i, str) and i][:LOCAL_MAX_MODELS]


def register_local(
    known: KnownProvider, base_url: str, models: list[str], result: Registered
) -> None:
    """A local server at `base_url` (validated: http(s), private only if allowed).

    Without given models, asks the server's /models (before any database work).
    """
    validate_base_url(base_url)
    models = models or discover_models(base_url)
    with transaction.atomic():
        provider, _ = Provider.objects.update_or_create(
            slug=known.slug,
            defaults={
                "name": known.name,
                "protocol": known.protocol,
                "base_url": base_url,
                "api_key_env": known.api_key_env,
                "enabled": True,
            },
        )
        for model in models:
            result.endpoints_created += _endpoint(provider, KnownEndpoint(model, model))
    result.enabled.append(provider)
    if not models:
        result.notes.append(
            f"{known.name}: no models found at {base_url}/models; add one with "
            f"--local-model {known.slug}=MODEL or in the admin."
        )


LOCAL_BY_SLUG = {p.slug: p for p in LOCAL}

# --- simulated demo providers -------------------------------------------------------------

# (protocol, slug, name, path appended to the simulator's URL, price factor)
SIM_PROVIDERS = (
    ("openai_chat", "sim-chat", "SimCloud Chat", "/v1", Decimal("1.00")),
    ("openai_responses", "sim-responses", "SimCloud Responses", "/v1", Decimal("1.25")),
    ("anthropic_messages", "sim-messages", "SimCloud Messages", "", Decimal("1.50")),
    ("gemini", "sim-gemini", "SimCloud Gemini", "", Decimal("0.80")),
)
# (model = simulator profile, display name, fake input price, fake output price)
SIM_PROFILES = (
    ("sim-gpu", "GPU-class ~70 tok/s (simulated)", "0.60", "0.80"),
    ("sim-wafer", "Wafer-class ~750 tok/s (simulated)", "0.85", "1.20"),
    ("sim-reasoning", "Reasoning model (simulated)", "1.10", "4.40"),
    ("sim-bursty", "Speculative decoding, bursty (simulated)", "0.40", "0.60"),
    ("sim-fast", "Test profile ~2000 tok/s (simulated)", "0.05", "0.10"),
)


@transaction.atomic
def register_cloud(result: Registered, env: Mapping[str, str] | None = None) -> None:
    """Azure, Bedrock and Vertex: registered and enabled when their variables are set; a note
    names the variables of each platform that is not (an existing row is disabled)."""
    env = os.environ if env is None else env
    for platform in CLOUD:
        known = platform.known
        resolved = platform.resolve(env)
        if resolved is None:
            Provider.objects.filter(slug=known.slug).update(enabled=False)
            result.notes.append(f"{known.name}: set {platform.enabled_by}.")
            continue
        base_url, api_key_env = resolved
        provider, _ = Provider.objects.update_or_create(
            slug=known.slug,
            defaults={
                "name": known.name,
                "protocol": known.protocol,
                "base_url": base_url,
                "api_key_env": api_key_env,
                "enabled": True,
            },
        )
        result.enabled.append(provider)
        result.endpoints_created += sum(_endpoint(provider, e) for e in known.endpoints)


SIM_PRICE_NOTE = "simulated price"


@transaction.atomic
def register_simulator(url: str, *, api_key_env: str = "") -> Registered:
    """Simulated providers for all four protocols, one endpoint per simulator profile.

    Re-running with a new URL (the simulator picked another port) updates the base URLs.
    """
    url = url.rstrip("/")
    validate_base_url(url)
    result = Registered()
    for protocol, slug, name, path, factor in SIM_PROVIDERS:
        provider, _ = Provider.objects.update_or_create(
            slug=slug,
            defaults={
                "name": name,
                "protocol": protocol,
                "base_url": url + path,
                "api_key_env": api_key_env,
                "enabled": True,
                "simulated": True,
            },
        )
        result.enabled.append(provider)
        for model, display, price_in, price_out in SIM_PROFILES:
            known = KnownEndpoint(
                model,
                display,
                str(Decimal(price_in) * factor),
                str(Decimal(price_out) * factor),
            )
            result.endpoints_created += _endpoint(provider, known, price_note=SIM_PRICE_NOTE)
    return result
