"""A run whose client fell behind the stream says so wherever its ITL or decode is shown."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from benchmarks.measure import Measurement
from benchmarks.models import Run
from benchmarks.stats import summarize
from tests.api_factories import make_endpoint, make_provider, make_run, token_client

pytestmark = pytest.mark.django_db

SLOT = datetime(2026, 3, 10, 12, tzinfo=UTC)


def sample(saturated: bool, **fields: object) -> Measurement:
    return Measurement(
        started_at=SLOT, t0_ns=0, saturated=saturated, decode_tps=50.0, itl_p50_ms=20.0, **fields
    )


def test_it_counts_the_saturated_samples_of_a_run_but_not_failed_ones():
    samples = [sample(True), sample(True), sample(False), sample(True, error_category="timeout")]

    assert summarize(samples)["saturated"] == 2


@pytest.fixture
def saturated_run(django_user_model) -> Run:
    run = make_run(make_endpoint(make_provider("acme")), SLOT, ok=5)
    Run.objects.filter(id=run.id).update(saturated_count=3)
    return run


def test_it_flags_the_run_page_and_the_runs_list(client, django_user_model, saturated_run):
    client.force_login(django_user_model.objects.create_user("viewer"))

    page = client.get(f"/runs/{saturated_run.id}/").content.decode()
    listing = client.get("/runs/").content.decode()

    assert "client saturated in 3 of 5" in page
    assert "client saturated" in listing


def test_it_gives_the_count_in_the_api(django_user_model, saturated_run):
    api = token_client(django_user_model.objects.create_user("script"))

    detail = api.get(f"/api/v1/runs/{saturated_run.id}/").json()
    listed = api.get("/api/v1/runs/").json()["results"][0]

    assert detail["saturated_count"] == 3 and listed["saturated_count"] == 3
