"""The endpoints a workload accepts, read as the advice needs them: their columns and their
provider's in one query, no model instance (a catalogue of hundreds of endpoints is read for
every question, and building an Endpoint and a Provider per row cost more than the ranking)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Q

from providers.models import Endpoint, endpoint_label

from .models import WorkloadProfile
from .shape import Shape


@dataclass(frozen=True, slots=True)
class Candidate:
    """One enabled endpoint the workload accepts (the fields of Endpoint the advice reads)."""

    id: int
    slug: str
    model: str
    display_name: str
    lane: str
    price_input_per_mtok: Decimal | None
    price_output_per_mtok: Decimal | None
    price_cached_input_per_mtok: Decimal | None
    provider_name: str
    provider_slug: str
    protocol: str
    base_url: str
    api_key_env: str
    simulated: bool

    @property
    def label(self) -> str:
        """Endpoint.label."""
        return endpoint_label(
            display_name=self.display_name,
            model=self.model,
            lane=self.lane,
            provider=self.provider_name,
            simulated=self.simulated,
        )


# Candidate's fields in order, as Endpoint columns.
COLUMNS = (
    "id", "slug", "model", "display_name", "lane", "price_input_per_mtok",
    "price_output_per_mtok", "price_cached_input_per_mtok", "provider__name", "provider__slug",
    "provider__protocol", "provider__base_url", "provider__api_key_env", "provider__simulated",
)  # fmt: skip


def candidates(shape: Shape, profile: WorkloadProfile | None) -> list[Candidate]:
    """Enabled endpoints the workload accepts: the profile's endpoints plus any whose model id
    or name contains one of the accepted model names (ignoring case); neither = all. In the
    endpoints' own order (Endpoint.Meta.ordering)."""
    chosen = Q()
    for name in shape.models:
        chosen |= Q(model__icontains=name) | Q(display_name__icontains=name)
    if profile is not None:
        explicit = list(profile.endpoints.values_list("id", flat=True))
        if explicit:
            chosen |= Q(id__in=explicit)
    endpoints = Endpoint.objects.filter(enabled=True)
    if chosen:
        endpoints = endpoints.filter(chosen)
    return [Candidate(*row) for row in endpoints.values_list(*COLUMNS)]
