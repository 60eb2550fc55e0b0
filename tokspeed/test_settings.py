"""Settings for the test suite: the production settings, plus loopback targets allowed.

pytest-django exports DJANGO_SETTINGS_MODULE, so subprocesses started by tests (Celery workers,
management commands) load this module too, and inherit the broker folder chosen here.
"""

import os
import tempfile

# Messages published by tests must never reach the repository's var/broker, where a later
# `make run` would consume them.
os.environ.setdefault("TOKSPEED_BROKER_DIR", tempfile.mkdtemp(prefix="tokspeed-test-broker-"))

from .settings import *  # noqa: E402, F403

# Tests benchmark the simulator and local servers on 127.0.0.1.
TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = True

# The time zone and the clock are chosen by bin/fake-clock-tests to prove that no test depends
# on the hour, date or zone it runs at (a DST change in a non-UTC zone among them).
TIME_ZONE = os.environ.get("TOKSPEED_TEST_TIME_ZONE", TIME_ZONE)  # noqa: F405

from .fake_clock import travel_if_asked  # noqa: E402

travel_if_asked()
