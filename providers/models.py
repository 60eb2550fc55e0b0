"""Provider (a vendor or server speaking one protocol) and Endpoint (one model it serves)."""

import os
import re
from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import models

from . import lanes
from .credentials import validate_extra_headers
from .validators import validate_base_url, validate_time_zone

ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
DEMAND_ZONE_HELP = (
    "IANA time zone (e.g. America/New_York) whose local day the provider's demand follows: "
    "the alerts' time-of-day slots follow it across daylight-saving changes. Blank: none (UTC "
    "slots; a daylight-saving date of a common zone does not open an alert by itself)."
)


class Protocol(models.TextChoices):
    OPENAI_CHAT = "openai_chat", "OpenAI Chat Completions"
    OPENAI_RESPONSES = "openai_responses", "OpenAI Responses"
    ANTHROPIC_MESSAGES = "anthropic_messages", "Anthropic Messages"
    GEMINI = "gemini", "Google Gemini"
    AZURE_OPENAI = "azure_openai", "Azure OpenAI (Chat Completions)"
    AZURE_OPENAI_RESPONSES = "azure_openai_responses", "Azure OpenAI (Responses, v1 surface)"
    BEDROCK_CONVERSE = "bedrock_converse", "AWS Bedrock ConverseStream"
    VERTEX_GEMINI = "vertex_gemini", "Google Vertex AI (Gemini)"
    VERTEX_ANTHROPIC = "vertex_anthropic", "Google Vertex AI (Anthropic models)"


def validate_env_name(value: str) -> None:
    if value and not ENV_NAME.match(value):
        raise ValidationError(
            "Give the NAME of an environment variable (e.g. OPENAI_API_KEY), never the key itself."
        )


class Provider(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    protocol = models.CharField(max_length=32, choices=Protocol.choices)
    base_url = models.URLField(max_length=300, validators=[validate_base_url])
    api_key_env = models.CharField(
        "API key variable",
        max_length=100,
        blank=True,
        validators=[validate_env_name],
        help_text="Name of the environment variable holding the key; the key is never stored.",
    )
    extra_headers = models.JSONField(
        default=dict,
        blank=True,
        validators=[validate_extra_headers],
        help_text="Harmless request headers (a version, a beta flag); never a key or a cookie.",
    )
    proxy_env = models.CharField(
        "proxy variable",
        max_length=100,
        blank=True,
        validators=[validate_env_name],
        help_text="Name of an environment variable holding this provider's proxy URL "
        "(http://[user:password@]host:port; empty value = connect directly). Blank: the "
        "workers' HTTPS_PROXY / HTTP_PROXY / NO_PROXY.",
    )
    ca_bundle = models.CharField(
        "CA bundle",
        max_length=300,
        blank=True,
        help_text="Path, on the workers, of a PEM file of CA certificates to trust (a "
        "TLS-inspecting proxy's CA). Blank: SSL_CERT_FILE, else the standard bundle.",
    )
    enabled = models.BooleanField(default=True)
    archived_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set by a DELETE: hidden from boards and schedules, history kept (restorable).",
    )
    simulated = models.BooleanField(
        default=False, help_text="Served by tokspeed's reference simulator, not a real provider."
    )
    demand_time_zone = models.CharField(
        max_length=64, blank=True, validators=[validate_time_zone], help_text=DEMAND_ZONE_HELP
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} (simulated)" if self.simulated else self.name

    @property
    def key_configured(self) -> bool:
        """True when no key is needed or its variable holds one (blank counts as unset, as in
        providers.config.read_key)."""
        return key_configured(self.api_key_env)


def key_configured(api_key_env: str) -> bool:
    """Provider.key_configured of a provider whose key variable is `api_key_env`."""
    return not api_key_env or bool(os.environ.get(api_key_env, "").strip())


def why_disabled(provider: Provider, *, endpoint_enabled: bool) -> str | None:
    """Endpoint.why_disabled of an endpoint of `provider` (for a list read as values)."""
    return why_skipped(
        key_configured=provider.key_configured,
        provider_enabled=provider.enabled,
        endpoint_enabled=endpoint_enabled,
    )


def why_skipped(
    *, key_configured: bool, provider_enabled: bool, endpoint_enabled: bool
) -> str | None:
    """why_disabled from the provider's columns, for a list that reads providers as values."""
    if not key_configured:
        return "no_key"  # an enabled provider without its key fails every run at once
    if not provider_enabled:
        return "provider"
    if not endpoint_enabled:
        return "endpoint"
    return None


_VIA = re.compile(r"\s+via\s+.*$|\s*\([^)]*\)\s*$", re.IGNORECASE)


def model_family(name: str) -> str:
    """The model a display name is about, without the route or a note: "Llama 3.3 70B via
    OpenRouter" and "Llama 3.3 70B (simulated)" are both "Llama 3.3 70B". The leaderboard
    groups and filters by it: the same model at several providers is the comparison people want.
    """
    family = name
    while (shorter := _VIA.sub("", family)) != family and shorter:
        family = shorter
    return family.strip() or name


def families_by_model_id() -> dict[str, str]:
    """Model id → the family its named endpoints give it: a custom endpoint serving `sim-gpu`
    with no display name joins the group of the endpoints that call `sim-gpu` "SimGPU"."""
    named = (
        Endpoint.objects.exclude(display_name="")
        .order_by("id")
        .values_list("model", "display_name")
    )
    return families_of(named)


def families_of(named: Iterable[tuple[str, str]]) -> dict[str, str]:
    """families_by_model_id from the (model, display name) of the named endpoints, in id
    order (for a reader that has them already)."""
    families: dict[str, str] = {}
    for model, display_name in named:
        families.setdefault(model, model_family(display_name))
    return families


def endpoint_label(
    *, display_name: str, model: str, lane: str, provider: str, simulated: bool
) -> str:
    """An endpoint's label (Endpoint.label) from its columns and its provider's, for readers of
    many endpoints that do not load them as models (advisor.candidates)."""
    name = display_name or model
    # "(simulated)" once: simulated profiles and providers often say it in their names.
    mark = simulated and "simulated" not in f"{name} {provider}".lower()
    lane_mark = f" [{lane}]" if lane != lanes.STANDARD else ""
    return f"{name}{lane_mark} @ {provider}{' (simulated)' if mark else ''}"


class Endpoint(models.Model):
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="endpoints")
    slug = models.SlugField(max_length=120, unique=True)
    model = models.CharField("model id", max_length=200)
    display_name = models.CharField(max_length=200, blank=True)
    price_input_per_mtok = models.DecimalField(
        "USD per 1M input tokens", max_digits=10, decimal_places=4, null=True, blank=True
    )
    price_output_per_mtok = models.DecimalField(
        "USD per 1M output tokens", max_digits=10, decimal_places=4, null=True, blank=True
    )
    price_cached_input_per_mtok = models.DecimalField(
        "USD per 1M cached input tokens",
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="Prompt-cache hits; blank = the provider lists no cached price "
        "(full input price).",
    )
    price_note = models.CharField(
        max_length=100, blank=True, help_text="Where the prices come from, e.g. 'list price, 2025'."
    )
    max_tokens_field = models.CharField(
        max_length=40, blank=True, help_text="Override the protocol's max-tokens field name."
    )
    reasoning_effort = models.CharField(max_length=20, blank=True)
    lane = models.CharField(
        max_length=20,
        choices=lanes.CHOICES,
        default=lanes.STANDARD,
        help_text="The speed lane asked for (OpenAI service_tier, Anthropic priority, Bedrock "
        "latency-optimized); its prices are this endpoint's prices.",
    )
    extra_body = models.JSONField(default=dict, blank=True, help_text="Merged into each request.")
    peak_concurrency = models.PositiveIntegerField(default=64)
    demand_time_zone = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_time_zone],
        help_text="Overrides the provider's demand time zone when set. " + DEMAND_ZONE_HELP,
    )
    # Roofline hints: ceiling = chips × bandwidth ÷ (active params × bytes per param).
    active_params_b = models.FloatField("active parameters (billions)", null=True, blank=True)
    bytes_per_param = models.FloatField(null=True, blank=True)
    hardware = models.CharField(max_length=100, blank=True)
    chips = models.PositiveIntegerField(null=True, blank=True)
    chip_bandwidth_tbps = models.FloatField("chip bandwidth (TB/s)", null=True, blank=True)
    enabled = models.BooleanField(default=True)
    archived_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set by a DELETE: hidden from boards and schedules, history kept (restorable).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["provider__name", "model"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "model", "lane"], name="endpoint_provider_model_lane"
            )
        ]

    def __str__(self) -> str:
        return self.label

    def clean(self) -> None:
        protocol = self.provider.protocol if self.provider_id else ""
        if protocol and self.lane not in lanes.supported(protocol):
            asks = ", ".join(lanes.supported(protocol))
            raise ValidationError({"lane": f"The {protocol} protocol asks for: {asks}."})

    @property
    def demand_zone(self) -> str:
        """The time zone this endpoint's demand follows: its own, else its provider's ('' =
        none)."""
        return self.demand_time_zone or self.provider.demand_time_zone

    @property
    def label(self) -> str:
        return endpoint_label(
            display_name=self.display_name,
            model=self.model,
            lane=self.lane,
            provider=self.provider.name,
            simulated=self.provider.simulated,
        )

    @property
    def why_disabled(self) -> str | None:
        """Why runs skip this endpoint: "no_key" (the provider's key variable is unset),
        "provider" or "endpoint" (switched off in the admin); None when it is measured."""
        return why_disabled(self.provider, endpoint_enabled=self.enabled)

    def roofline_tps(self) -> float | None:
        """Decode ceiling in tokens/s from the memory-bandwidth roofline, when hints are set."""
        return roofline_tps(
            self.active_params_b, self.bytes_per_param, self.chips, self.chip_bandwidth_tbps
        )


def roofline_tps(
    active_params_b: float | None,
    bytes_per_param: float | None,
    chips: int | None,
    chip_bandwidth_tbps: float | None,
) -> float | None:
    """Endpoint.roofline_tps from its four hints (None unless every one is set)."""
    if not (active_params_b and bytes_per_param and chips and chip_bandwidth_tbps):
        return None
    bytes_per_token = active_params_b * 1e9 * bytes_per_param
    return chips * chip_bandwidth_tbps * 1e12 / bytes_per_token
