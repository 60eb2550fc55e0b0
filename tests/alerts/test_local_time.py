"""The demand time zone's clock (alerts/detection/local_time.py): its changes, and time-of-day
buckets and days that follow it (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from alerts.detection.baseline import Runs
from alerts.detection.local_time import COMMON_ZONES, dst_slot, transitions, utc_offsets


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


def _slot_runs(after: list[float]) -> tuple[np.ndarray, ...]:
    """Three runs a day (02:30, 10:30, 22:30 UTC) from 2026-02-08 to New York's March change
    (2026-03-08 07:00 UTC) and on; the 22:30 slot's runs since the change worse by `after`
    (log units, one a day), every other run as expected; noise scale 0.075 each."""
    change = ts(2026, 3, 8, 7)
    days = np.arange(-28, len(after))
    t = np.sort(
        np.concatenate([ts(2026, 3, 8) + days * 86_400.0 + h * 3600.0 for h in (2.5, 10.5, 22.5)])
    )
    t = t[t <= change + (len(after) - 1) * 86_400.0 + 16 * 3600.0]
    runs = Runs.of(t, np.zeros(len(t)))
    resid = np.zeros(len(t))
    slot = np.flatnonzero((runs.bucket == 3) & (runs.t > change))
    resid[slot] = after[: len(slot)]
    return runs.t, runs.bucket, resid, np.full(len(t), 0.075), change


def test_the_guard_holds_a_slot_moved_at_the_change_whose_runs_since_vary_by_their_noise() -> None:
    # The slot is a fifth worse from its first run after the change on; its second run was a
    # quiet one and its newest a loud one, which put the most likely onset at its third run
    # (the guard let a daylight-saving shift open on a TTFT series that way). A step from the
    # first run is nearly as likely: held.
    t, bucket, resid, scale, change = _slot_runs([0.17, 0.04, 0.19, 0.24, 0.25, 0.36])
    found = dst_slot(
        t, bucket, resid, scale, instants=np.array([change]), now=float(t[-1]), half=0.07
    )
    assert found == (3, change)


def test_the_guard_does_not_hold_a_slot_that_stepped_days_after_the_change() -> None:
    # The same slot as good as ever for its first two runs after the change, then 35 % worse:
    # a step of its own, days after the change, which the change does not explain.
    t, bucket, resid, scale, change = _slot_runs([0.0, 0.0, 0.3, 0.3, 0.3, 0.3])
    found = dst_slot(
        t, bucket, resid, scale, instants=np.array([change]), now=float(t[-1]), half=0.07
    )
    assert found is None
