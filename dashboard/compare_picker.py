"""The compare page's endpoint picker: every live endpoint, grouped by model family.

Read as values and written out here rather than by the template engine: one checkbox per
endpoint grew the page's cost with the catalogue (about a tenth of a millisecond of template
lookups per endpoint, plus a model instance and its provider's each), so a catalogue of
hundreds of endpoints cost tens of milliseconds a request before any chart was read. Providers
are read as values too (a model instance each cost about 10 µs; a catalogue has hundreds).
"""

from dataclasses import dataclass
from html import escape  # what django.utils.html.escape calls, without its lazy-text wrapper

from django.db.models import BooleanField, ExpressionWrapper
from django.utils.safestring import SafeString, mark_safe

from providers.archive import LIVE_ENDPOINTS
from providers.models import (
    Endpoint,
    families_of,
    key_configured,
    model_family,
    why_skipped,
)


@dataclass(frozen=True, slots=True)
class PickerProvider:
    """What the picker shows of a provider."""

    name: str
    simulated: bool
    api_key_env: str
    enabled: bool
    key_configured: bool


@dataclass(frozen=True, slots=True)
class Choice:
    """One endpoint in the picker."""

    slug: str
    model: str
    display_name: str
    provider: PickerProvider
    why_disabled: str | None


def picker_groups() -> list[tuple[str, list[Choice]]]:
    """Every live endpoint, grouped by model family (_family_order: measurable families first,
    then the most widely served), then by provider: the comparison people come for is one
    model at several providers.

    One query: every endpoint with its provider's columns (an archived one too, for the
    families its display name gives its model id: families_by_model_id)."""
    rows = (
        Endpoint.objects.order_by("provider__name", "model", "id")
        .annotate(live=ExpressionWrapper(LIVE_ENDPOINTS, output_field=BooleanField()))
        .values_list("id", "model", "display_name", "live", "slug", "enabled", *_PROVIDER)
    )
    named = families_of(
        (model, display_name)
        for _, model, display_name, *_ in sorted(row for row in rows if row[2])
    )
    providers: dict[tuple, PickerProvider] = {}
    groups: dict[str, list[Choice]] = {}
    for _, model, display_name, live, slug, enabled, *columns in rows:
        if not live:
            continue
        provider = providers.get(tuple(columns))
        if provider is None:
            name, simulated, env, provider_enabled = columns[1:]
            provider = PickerProvider(name, simulated, env, provider_enabled, key_configured(env))
            providers[tuple(columns)] = provider
        family = model_family(display_name) if display_name else named.get(model, model)
        reason = why_skipped(
            key_configured=provider.key_configured,
            provider_enabled=provider.enabled,
            endpoint_enabled=enabled,
        )
        groups.setdefault(family, []).append(Choice(slug, model, display_name, provider, reason))
    return sorted(groups.items(), key=_family_order)


def _family_order(group: tuple[str, list[Choice]]) -> tuple[bool, int, str]:
    """Families with an endpoint tokspeed can measure first (a catalogue family nobody holds a
    key for says "not measured" on every line), then the most widely served, then by name."""
    family, choices = group
    return (all(choice.why_disabled for choice in choices), -len(choices), family.lower())


_PROVIDER = (
    "provider_id",
    "provider__name",
    "provider__simulated",
    "provider__api_key_env",
    "provider__enabled",
)


def picker_html(groups: list[tuple[str, list[Choice]]], chosen: set[str]) -> SafeString:
    """The picker's groups as HTML: a fieldset per family, a labelled checkbox per endpoint
    (checked when its slug is chosen; every text escaped)."""
    parts = []
    for family, choices in groups:
        count = len(choices)
        more = f' <span class="muted">· {count} providers</span>' if count > 1 else ""
        parts.append(
            f'    <fieldset class="picker-group" data-model="{escape(family)}">\n'
            f"      <legend>{escape(family)}{more}</legend>\n"
        )
        parts.extend(_choice_html(escape(family.lower()), c, c.slug in chosen) for c in choices)
        parts.append("    </fieldset>\n")
    return mark_safe("".join(parts))  # noqa: S308 - every value above is escaped


def _choice_html(family: str, choice: Choice, checked: bool) -> str:
    provider = choice.provider
    search = " ".join(
        (family, escape(choice.display_name.lower()), escape(choice.model.lower())),
    )
    marks = ' <span class="badge sim">simulated</span>' if provider.simulated else ""
    if choice.why_disabled:
        if choice.why_disabled == "no_key":
            title = f"{escape(provider.api_key_env)} is not set"
        else:
            title = "disabled in the admin"
        marks += f' <span class="status s-disabled" title="{title}">not measured</span>'
    return (
        f'      <label data-search="{search} {escape(provider.name.lower())}">'
        f'<input type="checkbox" name="e" value="{escape(choice.slug)}" '
        f"{'checked' if checked else ''}> {escape(provider.name)} "
        f'<span class="muted">{escape(choice.display_name or choice.model)}</span>'
        f"{marks}</label>\n"
    )
