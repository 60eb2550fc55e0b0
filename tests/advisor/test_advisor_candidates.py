"""Candidates are read as rows, not models (advisor.candidates): each reads as its Endpoint."""

import pytest

from advisor.candidates import candidates
from advisor.shape import Shape
from providers.lanes import PRIORITY
from tests import dashboard_data as data


@pytest.mark.django_db
def test_each_candidate_has_its_endpoints_label_prices_and_provider():
    plain = data.provider("plain-co")
    simulated = data.provider("sim-co", simulated=True)
    named = data.provider("sim-named", simulated=True, name="Simulated Named")
    endpoints = [
        data.endpoint(plain, "m-1"),
        data.endpoint(plain, "m-1-fast", model="m-1", lane=PRIORITY, price_in=None),
        data.endpoint(simulated, "m-2", display_name=""),
        data.endpoint(named, "m-3"),
    ]
    data.endpoint(plain, "off", enabled=False)
    read = {c.id: c for c in candidates(Shape(), None)}
    assert sorted(read) == sorted(e.id for e in endpoints)
    for endpoint in endpoints:
        candidate = read[endpoint.id]
        assert candidate.label == endpoint.label
        assert (candidate.slug, candidate.model, candidate.display_name, candidate.lane) == (
            endpoint.slug, endpoint.model, endpoint.display_name, endpoint.lane,
        )  # fmt: skip
        assert (
            candidate.price_input_per_mtok,
            candidate.price_output_per_mtok,
            candidate.price_cached_input_per_mtok,
        ) == (
            endpoint.price_input_per_mtok,
            endpoint.price_output_per_mtok,
            endpoint.price_cached_input_per_mtok,
        )
        provider = endpoint.provider
        assert (
            candidate.provider_name, candidate.provider_slug, candidate.protocol,
            candidate.base_url, candidate.api_key_env, candidate.simulated,
        ) == (
            provider.name, provider.slug, provider.protocol, provider.base_url,
            provider.api_key_env, provider.simulated,
        )  # fmt: skip
    labels = {read[e.id].label for e in endpoints}
    assert "M 1 Fast [priority] @ Plain Co" in labels and "m-2 @ Sim Co (simulated)" in labels
    assert "M 3 @ Simulated Named" in labels  # "(simulated)" once
