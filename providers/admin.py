"""Admin pages for providers and endpoints. The key itself is never shown: only its variable
name and whether that variable is set in the server's environment."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from .models import Endpoint, Provider


class EndpointInline(admin.TabularInline):
    model = Endpoint
    extra = 0
    fields = (
        "model",
        "display_name",
        "slug",
        "price_input_per_mtok",
        "price_output_per_mtok",
        "enabled",
    )
    show_change_link = True


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "slug",
        "protocol",
        "base_url",
        "measured",
        "simulated",
        "key_status",
        "endpoint_count",
    )
    list_filter = ("protocol", "enabled", "simulated")
    search_fields = ("name", "slug", "base_url")
    prepopulated_fields = {"slug": ("name",)}
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    inlines = [EndpointInline]

    @admin.display(boolean=True, description="key configured")
    def key_status(self, obj: Provider) -> bool:
        return obj.key_configured

    @admin.display(description="enabled", ordering="enabled")
    def measured(self, obj: Provider) -> str:
        """Not a bare ✓ when the key variable is unset: such a provider's runs all fail."""
        if not obj.enabled:
            return "Disabled"
        if not obj.key_configured:
            return f"⚠ Enabled, but {obj.api_key_env} is not set: not measured"
        return "Enabled ✓"

    def save_model(self, request: HttpRequest, obj: Provider, form: object, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if obj.enabled and not obj.key_configured:
            messages.warning(
                request,
                f"{obj.api_key_env} is not set in this server's environment: {obj.name}'s "
                "endpoints are not measured until it is (set it where the workers run, then "
                "restart them).",
            )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Provider]:
        return super().get_queryset(request).annotate(n_endpoints=Count("endpoints"))

    @admin.display(description="endpoints", ordering="n_endpoints")
    def endpoint_count(self, obj: Provider) -> int:
        return obj.n_endpoints


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = (
        "label",
        "model",
        "provider",
        "price_input_per_mtok",
        "price_output_per_mtok",
        "price_note",
        "enabled",
        "is_simulated",
    )
    list_filter = ("enabled", "provider__simulated", "provider__protocol", "provider")
    search_fields = ("model", "display_name", "slug", "provider__name")
    list_select_related = ("provider",)
    autocomplete_fields = ("provider",)

    @admin.display(boolean=True, description="simulated", ordering="provider__simulated")
    def is_simulated(self, obj: Endpoint) -> bool:
        return obj.provider.simulated
