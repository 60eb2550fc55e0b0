"""Settings for the test suite: the production settings, plus loopback targets allowed.

pytest-django exports DJANGO_SETTINGS_MODULE, so subprocesses started by tests (Celery workers,
management commands) load this module too.
"""

from .settings import *  # noqa: F403

# Tests benchmark the simulator and local servers on 127.0.0.1.
TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = True
