"""The fake clock that bin/fake-clock-tests runs the suite under reaches every process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timedelta

import pytest
import time_machine

from tokspeed.fake_clock import parse_instant

SHOW_CLOCK = (
    "import django; django.setup();"
    "from django.utils import timezone; from django.conf import settings;"
    "print(timezone.now().isoformat()); print(settings.TIME_ZONE)"
)


def clock_of_a_process(**env: str) -> tuple[datetime, str]:
    result = subprocess.run(
        [sys.executable, "-c", SHOW_CLOCK],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "tokspeed.test_settings", **env},
    )
    assert result.returncode == 0, result.stderr
    now, zone = result.stdout.split()
    return datetime.fromisoformat(now), zone


def test_it_travels_a_process_that_loads_the_test_settings_to_the_fake_now() -> None:
    now, zone = clock_of_a_process(
        TOKSPEED_FAKE_NOW="2026-03-08T06:45:00Z",
        TOKSPEED_FAKE_EPOCH="",
        TOKSPEED_TEST_TIME_ZONE="America/New_York",
    )
    start = parse_instant("2026-03-08T06:45:00Z")
    assert start <= now < start + timedelta(seconds=30) and zone == "America/New_York"


def test_it_puts_a_later_process_on_the_same_timeline() -> None:
    # A worker started 90 s (real time) after the session began is 90 s past the fake instant.
    # The real clock: this test itself may run under a fake one (bin/fake-clock-tests).
    hatch = time_machine.escape_hatch
    real_now = hatch.time.time() if hatch.is_travelling() else time.time()
    now, _ = clock_of_a_process(
        TOKSPEED_FAKE_NOW="2026-02-28T23:59:00Z", TOKSPEED_FAKE_EPOCH=repr(real_now - 90)
    )
    start = parse_instant("2026-02-28T23:59:00Z")
    assert start + timedelta(seconds=90) <= now < start + timedelta(seconds=120)
    assert now.month == 3  # a month end crossed on the shared timeline


def test_it_refuses_a_fake_now_without_an_offset() -> None:
    with pytest.raises(ValueError, match="needs an offset"):
        parse_instant("2026-03-08T06:45:00")
