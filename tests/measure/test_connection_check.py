""" "Test connection" on an endpoint: one short request through the real adapter, against the
simulator on loopback, from the API and from the admin's change page (headless Chromium); and
the private-address rule at connect time for it and for the breaker's probe (one client factory)."""

from __future__ import annotations

import socket

import pytest

from benchmarks.models import Run, Sample
from providers.simulator.process import SimulatorHandle
from tests.api_factories import make_endpoint, make_provider

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nobody listens once it is closed


def test_it_answers_with_ttft_and_tokens_through_the_real_adapter(staff, simulator) -> None:
    sim = make_provider("sim", base_url=simulator.openai_base, simulated=True)
    make_endpoint(sim, "sim-fast", model="sim-fast+tokens=500+ttft=40")

    response = staff.post("/api/v1/endpoints/sim-fast/test/")

    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and body["http_status"] == 200
    assert body["output_tokens"] == 32  # the check asks for a few tokens, not 500
    assert body["ttft_ms"] >= 40 and body["summary"].startswith("Connected: first token after")
    assert not Run.objects.exists() and not Sample.objects.exists()  # nothing stored


def test_it_says_in_words_what_went_wrong(staff, simulator: SimulatorHandle) -> None:
    dead = make_provider("dead", base_url=f"http://127.0.0.1:{closed_port()}/v1")
    make_endpoint(dead, "dead-m", model="m")
    sim = make_provider("sim", base_url=simulator.openai_base, simulated=True)
    make_endpoint(sim, "sim-401", model="sim-fast+fault=401")
    keyless = make_provider("keyless", api_key_env="TOKSPEED_TEST_UNSET_KEY_VAR")
    make_endpoint(keyless, "keyless-m", model="m")

    refused = staff.post("/api/v1/endpoints/dead-m/test/").json()
    assert refused["ok"] is False and refused["error_category"]
    assert "127.0.0.1" in refused["summary"]
    wrong_key = staff.post("/api/v1/endpoints/sim-401/test/").json()
    assert wrong_key["ok"] is False and wrong_key["http_status"] == 401
    assert wrong_key["summary"].startswith("Failed (HTTP 401): auth")
    no_key = staff.post("/api/v1/endpoints/keyless-m/test/").json()
    assert no_key["ok"] is False and "TOKSPEED_TEST_UNSET_KEY_VAR" in no_key["summary"]


def test_it_lets_only_staff_spend_tokens_on_a_test(reader, anon, simulator) -> None:
    sim = make_provider("sim", base_url=simulator.openai_base, simulated=True)
    make_endpoint(sim, "sim-fast", model="sim-fast")
    assert reader.post("/api/v1/endpoints/sim-fast/test/").status_code == 403
    assert anon.post("/api/v1/endpoints/sim-fast/test/").status_code in (401, 403)


def test_it_refuses_a_name_that_resolves_to_loopback_at_connect_time(
    staff, simulator, settings
) -> None:
    # Saved while private addresses were allowed (or while the name resolved elsewhere): by
    # the time of the check "localhost" leads to loopback, and the check must not go there.
    port = simulator.openai_base.split(":")[2].split("/")[0]
    sim = make_provider("rebind", base_url=f"http://localhost:{port}/v1", simulated=True)
    make_endpoint(sim, "rebind-m", model="sim-fast+tokens=5")
    settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = False

    body = staff.post("/api/v1/endpoints/rebind-m/test/").json()

    assert body["ok"] is False, "the check reached a loopback address"
    assert body["error_category"] == "unreachable", body
    assert "private or loopback" in body["error_message"], body["error_message"]


def test_it_refuses_loopback_at_connect_time_for_the_breakers_probe_too(simulator, settings):
    # The probe a run sends before a tripped breaker lets it through takes the same client
    # factory as "Test connection" and the run: a name resolving to loopback is not reached.
    from benchmarks import breaker
    from providers.config import endpoint_config

    port = simulator.openai_base.split(":")[2].split("/")[0]
    sim = make_provider("rebind", base_url=f"http://localhost:{port}/v1", simulated=True)
    endpoint = make_endpoint(sim, "rebind-m", model="sim-fast+tokens=5")
    settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = False

    m = breaker.probe(endpoint_config(endpoint), prompt="hi", provider=sim)

    assert not m.ok and m.error_category == "unreachable", m.error_message
    assert "private or loopback" in m.error_message
