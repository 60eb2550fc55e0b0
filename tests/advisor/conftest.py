"""Fixtures of the advisor's tests: the seeded world's clock and the seeded world."""

import pytest
import time_machine
from django.core.cache import cache

from tests import advisor_data as seed


@pytest.fixture
def at_seed_now():
    """Time pinned at the seeded history's NOW, the advice cache empty before and after."""
    cache.clear()
    with time_machine.travel(seed.NOW, tick=False):
        yield
    cache.clear()


@pytest.fixture
def world():
    return seed.world()
