"""Fixtures shared across test modules."""

import os
from collections.abc import Iterator

import pytest

from providers.simulator.process import SimulatorHandle, start_simulator


@pytest.fixture(scope="session")
def simulator() -> Iterator[SimulatorHandle]:
    """One simulator process (`manage.py simulate --port 0`) for the whole test session.

    Tests that change its runtime controls use `sim_control` instead, which resets them.
    """
    with start_simulator() as handle:
        yield handle


@pytest.fixture
def sim_control(simulator: SimulatorHandle) -> Iterator[SimulatorHandle]:
    """The session simulator, with speed_factor/ttft_factor reset to 1.0 after the test."""
    yield simulator
    simulator.reset()


def pytest_report_header() -> str | None:
    """Say which instant and zone the session runs at when bin/fake-clock-tests chose them."""
    from django.conf import settings
    from django.utils import timezone

    from tokspeed.fake_clock import FAKE_NOW_VARIABLE

    if not os.environ.get(FAKE_NOW_VARIABLE):
        return None
    return f"fake clock: {timezone.now().isoformat()} (TIME_ZONE={settings.TIME_ZONE})"
