"""A run's series pool their evidence of how the provider drifts with what the provider's other
endpoints read of theirs (docs/alerts.md, "The run's series pool their evidence of drift"):
stored runs of three endpoints of a slowly drifting provider, each evaluated as it ends (the
clock pinned a minute after its slot). One endpoint's own 28 days read the drift too low and
open a false alert; read beside its provider's other endpoints, they open none. Another
provider's endpoints lend nothing."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
import time_machine

from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.models import Alert, SeriesState
from alerts.testing import store_run
from benchmarks.models import Vantage, Workload
from providers.models import Endpoint, Provider
from tests.alerts.test_noise_pool import HOURS, LEVELS, MONDAY, _drifting

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("real_episodes")]

DAYS = 52  # a full baseline, then three weeks evaluated
FROM_DAY = 31


def _provider(slug: str) -> Provider:
    return Provider.objects.create(
        slug=slug, name=slug.title(), protocol="openai_chat", base_url=f"https://{slug}.example/v1"
    )


def _store(endpoint: Endpoint, workload, vantage, seed: int) -> list:
    """The endpoint's runs to DAYS: one request each, decode and TTFT drifting alike
    (φ 0.95 per 8 h, σ 6 %) under 7 % run noise (tests/alerts/test_noise_pool's provider)."""
    rng = np.random.default_rng(seed)
    hours = HOURS[HOURS < DAYS * 24]
    decode, ttft = (
        lv * np.exp(_drifting(rng, phi=0.95, white=0.07)[: len(hours)]) for lv in LEVELS
    )
    return [
        store_run(
            endpoint=endpoint,
            workload=workload,
            vantage=vantage,
            slot=MONDAY + timedelta(hours=float(h)),
            decode=[float(d)],
            ttft=[float(t)],
        )
        for h, d, t in zip(hours, decode, ttft, strict=True)
    ]


def _watched_alerts(*, peers_at: str) -> list[Alert]:
    """Store the watched endpoint (acme) and two others at `peers_at` (acme or another
    provider), evaluate every run from FROM_DAY on in slot order; the watched one's alerts."""
    workload = Workload.objects.create(slug="w", name="Standard prompt")
    vantage = Vantage.objects.create(slug="eu", label="EU probe", queue="eu")
    acme = _provider("acme")
    others = acme if peers_at == "acme" else _provider(peers_at)
    watched = Endpoint.objects.create(provider=acme, slug="acme-llama", model="llama-3-70b")
    runs = _store(watched, workload, vantage, seed=100)
    for k, seed in enumerate((1100, 2100)):
        peer = Endpoint.objects.create(provider=others, slug=f"{peers_at}-{k}", model=f"m{k}")
        runs += _store(peer, workload, vantage, seed=seed)
    for run in sorted(runs, key=lambda r: (r.slot, r.endpoint_id != watched.id)):
        if run.slot >= MONDAY + timedelta(days=FROM_DAY):
            with time_machine.travel(run.slot + timedelta(minutes=1), tick=False):
                evaluate_after_run(run.id)
    return list(Alert.objects.filter(endpoint=watched))


def test_a_drift_the_providers_other_endpoints_show_opens_no_alert() -> None:
    assert _watched_alerts(peers_at="acme") == []
    # Each series keeps what its baseline read, for the provider's others to pool
    stored = SeriesState.objects.filter(metric__in=("decode_tps", "ttft_ms"))
    assert stored.count() == 6 and all(s.noise_lags for s in stored)


def test_another_providers_endpoints_lend_no_evidence() -> None:
    alerts = _watched_alerts(peers_at="other")
    assert [a.metric for a in alerts] == ["decode_tps"]
