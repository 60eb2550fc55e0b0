"""Providers and endpoints: keys are neither accepted nor returned, only the variable's name."""

from typing import Any

from rest_framework import serializers

from providers import lanes
from providers.credentials import mask_credentials
from providers.models import Endpoint, Provider

from ..keyguard import check_headers, check_json, check_url, refuse_secret_fields
from .fields import SlugRef


class ProviderSerializer(serializers.ModelSerializer):
    key_configured = serializers.BooleanField(
        read_only=True,
        help_text="Whether the variable named in api_key_env is set where the API runs "
        "(always true when no variable is needed).",
    )
    endpoint_count = serializers.SerializerMethodField()
    extra_headers = serializers.JSONField(
        required=False,
        help_text="Harmless request headers; never a credential. Shown to staff only.",
    )

    class Meta:
        model = Provider
        fields = [
            "id",
            "slug",
            "name",
            "protocol",
            "base_url",
            "api_key_env",
            "key_configured",
            "extra_headers",
            "proxy_env",
            "ca_bundle",
            "enabled",
            "simulated",
            "demand_time_zone",
            "endpoint_count",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]

    def to_representation(self, provider: Provider) -> dict:
        data = super().to_representation(provider)
        request = self.context.get("request")
        if not (request and request.user and request.user.is_staff):
            # Headers are configuration, shown to the staff who manage providers only.
            data.pop("extra_headers", None)
        return data

    def get_endpoint_count(self, provider: Provider) -> int:
        annotated = getattr(provider, "endpoint_count", None)  # lists annotate it in one query
        return provider.endpoints.count() if annotated is None else annotated

    def _env_name(self, data: Any) -> str:
        if isinstance(data, dict) and isinstance(data.get("api_key_env"), str):
            return data["api_key_env"]
        return self.instance.api_key_env if self.instance else ""

    def to_internal_value(self, data: Any) -> dict:
        refuse_secret_fields(data, self._env_name(data))
        return super().to_internal_value(data)

    def validate_extra_headers(self, value: Any) -> dict[str, str]:
        return check_headers(value, env_name=self._env_name(self.initial_data))

    def validate_base_url(self, value: str) -> str:
        check_url(value, env_name=self._env_name(self.initial_data))
        return value


class EndpointSerializer(serializers.ModelSerializer):
    provider = SlugRef(queryset=Provider.objects.all())
    label = serializers.CharField(read_only=True)
    simulated = serializers.BooleanField(source="provider.simulated", read_only=True)
    api_key_env = serializers.CharField(
        source="provider.api_key_env",
        read_only=True,
        help_text="Name of the provider's key variable (never the key).",
    )
    key_configured = serializers.BooleanField(source="provider.key_configured", read_only=True)
    roofline_tps = serializers.SerializerMethodField(
        help_text="Decode ceiling in tokens/s from the memory-bandwidth roofline, when hints "
        "are set."
    )

    class Meta:
        model = Endpoint
        fields = [
            "id",
            "slug",
            "provider",
            "model",
            "display_name",
            "label",
            "simulated",
            "api_key_env",
            "key_configured",
            "price_input_per_mtok",
            "price_output_per_mtok",
            "price_cached_input_per_mtok",
            "price_note",
            "max_tokens_field",
            "reasoning_effort",
            "lane",
            "extra_body",
            "peak_concurrency",
            "demand_time_zone",
            "active_params_b",
            "bytes_per_param",
            "hardware",
            "chips",
            "chip_bandwidth_tbps",
            "roofline_tps",
            "enabled",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]
        extra_kwargs = {
            "price_input_per_mtok": {"min_value": 0},
            "price_output_per_mtok": {"min_value": 0},
            "price_cached_input_per_mtok": {"min_value": 0},
            "peak_concurrency": {"min_value": 1, "max_value": 10_000},
            "active_params_b": {"min_value": 0.001, "max_value": 100_000},
            "bytes_per_param": {"min_value": 0.01, "max_value": 64},
            "chips": {"min_value": 1, "max_value": 1_000_000},
            "chip_bandwidth_tbps": {"min_value": 0.001, "max_value": 10_000},
        }

    def to_representation(self, endpoint: Endpoint) -> dict:
        data = super().to_representation(endpoint)
        # Rows stored before values were checked: a key in the body is never shown.
        data["extra_body"] = mask_credentials(data.get("extra_body") or {})
        return data

    def get_roofline_tps(self, endpoint: Endpoint) -> float | None:
        return endpoint.roofline_tps()

    def _env_name(self) -> str:
        provider = None
        if isinstance(self.initial_data, dict):
            provider = Provider.objects.filter(
                slug=str(self.initial_data.get("provider", "")).replace("\x00", "")
            ).first()
        if provider is None and self.instance is not None:
            provider = self.instance.provider
        return provider.api_key_env if provider else ""

    def to_internal_value(self, data: Any) -> dict:
        refuse_secret_fields(data, self._env_name())
        return super().to_internal_value(data)

    def validate(self, attrs: dict) -> dict:
        """A lane the provider's protocol can ask for (providers.lanes), as a 400."""
        attrs = super().validate(attrs)
        provider = attrs.get("provider") or getattr(self.instance, "provider", None)
        lane = attrs.get("lane", getattr(self.instance, "lane", lanes.STANDARD))
        if provider is not None and lane not in lanes.supported(provider.protocol):
            asks = ", ".join(lanes.supported(provider.protocol))
            raise serializers.ValidationError(
                {"lane": f"The {provider.protocol} protocol asks for: {asks}."}
            )
        return attrs

    def validate_extra_body(self, value: Any) -> dict:
        if not isinstance(value, dict):
            raise serializers.ValidationError("Give an object merged into each request body.")
        check_json(value, env_name=self._env_name())
        return value
