"""The demand time zone's clock (alerts/detection/local_time.py): its changes, and time-of-day
buckets and days that follow it (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from alerts.detection.baseline import Runs
from alerts.detection.local_time import COMMON_ZONES, transitions, utc_offsets


def ts(*args: int) -> float:
    return datetime(*args, tzinfo=UTC).timestamp()


def test_it_finds_the_daylight_saving_changes_of_a_zone_and_of_the_common_zones() -> None:
    year = (ts(2026, 1, 1), ts(2027, 1, 1))
    new_york = transitions(["America/New_York"], *year)
    assert [datetime.fromtimestamp(t, UTC) for t in new_york] == [
        datetime(2026, 3, 8, 7, tzinfo=UTC),  # 02:00 EST
        datetime(2026, 11, 1, 6, tzinfo=UTC),  # 02:00 EDT
    ]
    assert len(transitions(["Asia/Tokyo"], *year)) == 0
    days = {
        datetime.fromtimestamp(t, UTC).date().isoformat() for t in transitions(COMMON_ZONES, *year)
    }
    assert days == {"2026-03-08", "2026-03-29", "2026-10-25", "2026-11-01"}


def test_it_puts_a_run_in_its_local_bucket_and_day_across_a_change() -> None:
    # 22:30 UTC: 17:30 in New York before its March change, 18:30 after it.
    t = [ts(2026, 3, 7, 22, 30), ts(2026, 3, 9, 22, 30), ts(2026, 3, 13, 2, 30)]
    assert list(utc_offsets(t, "America/New_York")) == [-5 * 3600, -4 * 3600, -4 * 3600]
    local = Runs.of(t, np.zeros(3), "America/New_York")
    assert list(local.bucket) == [2, 3, 3]  # 12–18, then 18–24 local
    assert list(local.day) == [5, 0, 3]  # Saturday, Monday, and Thursday evening local
    utc = Runs.of(t, np.zeros(3))
    assert list(utc.bucket) == [3, 3, 0] and list(utc.day) == [5, 0, 4]
