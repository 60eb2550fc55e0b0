"""The Redis database the tests share (`TOKSPEED_TEST_REDIS_URL`, one per checkout).

Its broker queue and its cache are one per database, not per pytest-xdist worker (a cache test
flushes the whole database), so every test that uses it carries `SHARED_REDIS`: under
`--dist loadgroup` they all run on one worker, one after another. Tests that need a broker to
break start a Redis server of their own instead (tests/fault_helpers.py).
"""

import os

import pytest

REDIS_URL = os.environ.get("TOKSPEED_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
SHARED_REDIS = pytest.mark.xdist_group("shared-redis")
