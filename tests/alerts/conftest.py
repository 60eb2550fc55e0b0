"""Shared by the alert tests."""

from __future__ import annotations

import pytest

from alerts.detection.rules import DetectorConfig

EPISODE_HOURS = DetectorConfig().episode_hours


@pytest.fixture(autouse=True)
def _hourly_positives_count(settings) -> None:
    """Most scenarios here store their slow runs an hour apart, for brevity: each positive
    counts in them. The rule that positives inside one provider episode count once
    (ALERTS_EPISODE_HOURS) is tested where it is set back to its default (`real_episodes`)."""
    settings.ALERTS_EPISODE_HOURS = 0


@pytest.fixture
def real_episodes(settings) -> None:
    """Positives count only a provider episode apart, as in production."""
    settings.ALERTS_EPISODE_HOURS = EPISODE_HOURS
