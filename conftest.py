"""Test-wide environment: set before Django loads its settings."""

import os

os.environ.setdefault("TOKSPEED_ALLOW_PRIVATE_ENDPOINTS", "1")
