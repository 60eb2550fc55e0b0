"""Settings for the test suite: the production settings, plus loopback targets allowed.

pytest-django exports DJANGO_SETTINGS_MODULE, so subprocesses started by tests (Celery workers,
management commands) load this module too, and inherit the broker folder chosen here.
"""

import os
import tempfile

# Messages published by tests must never reach the repository's var/broker, where a later
# `make run` would consume them. Under pytest-xdist each worker (gw0, gw1…) gets a folder of its
# own: the workers inherit the environment of the controller, which has read these settings too,
# and two workers sharing a folder would consume each other's messages. Processes a test starts
# inherit the worker's folder (TOKSPEED_BROKER_DIR_OF says whose it is).
_xdist_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if "TOKSPEED_BROKER_DIR" not in os.environ or (
    _xdist_worker and os.environ.get("TOKSPEED_BROKER_DIR_OF") != _xdist_worker
):
    os.environ["TOKSPEED_BROKER_DIR"] = tempfile.mkdtemp(prefix="tokspeed-test-broker-")
    os.environ["TOKSPEED_BROKER_DIR_OF"] = _xdist_worker

from .settings import *  # noqa: E402, F403

# Tests benchmark the simulator and local servers on 127.0.0.1.
TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = True

# Tests never depend on a secret file in var/ (settings do not create one).
SECRET_KEY = SECRET_KEY or "tokspeed-tests-only-" + "x" * 40  # noqa: F405

# A second connection alias to the same test database (TEST MIRROR), so the suite can show which
# alias each query used. Its router is installed only by the tests that need it
# (tests/benchmarks/test_replica.py): every other test reads and writes "default" alone.
if DATABASES["default"]["ENGINE"].endswith("postgresql") and "replica" not in DATABASES:  # noqa: F405
    DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}  # noqa: F405

# The time zone and the clock are chosen by bin/fake-clock-tests to prove that no test depends
# on the hour, date or zone it runs at (a DST change in a non-UTC zone among them).
TIME_ZONE = os.environ.get("TOKSPEED_TEST_TIME_ZONE", TIME_ZONE)  # noqa: F405

from .fake_clock import travel_if_asked  # noqa: E402

travel_if_asked()
