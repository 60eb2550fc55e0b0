"""A workload that would exhaust a worker is refused as a product, not one limit at a time."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from benchmarks.models import Workload


@pytest.mark.django_db
def test_it_refuses_the_product_of_concurrency_rounds_and_context(settings) -> None:
    huge = Workload(
        slug="huge", name="huge", concurrency=10_000, repetitions=1_000, context_tokens=2_000_000
    )
    with pytest.raises(ValidationError) as refused:
        huge.full_clean()
    text = " ".join(refused.value.messages)
    assert "10,000 concurrent × 1,000 rounds = 10,000,000 requests per run" in text
    assert "above the ceiling of 256 MiB" in text and "10,000 is above the ceiling" in text


@pytest.mark.django_db
def test_it_accepts_each_limit_alone_within_the_ceiling() -> None:
    Workload(slug="t-long", name="long", context_tokens=30_000, concurrency=1).full_clean()
    Workload(slug="t-peak", name="peak", concurrency=64, repetitions=5).full_clean()
    wide = Workload(slug="wide", name="wide", concurrency=64, context_tokens=2_000_000)
    with pytest.raises(ValidationError, match="MiB held at once"):
        wide.full_clean()
