"""The demand time zone's clock (alerts/detection/local_time.py): its changes, time-of-day
buckets and days that follow it, and the slots a change moves runs into (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from alerts.detection.detector import SeriesInput, assess_together, judge
from alerts.detection.hysteresis import Streak, Transition, advance, counted_at
from alerts.detection.local_time import COMMON_ZONES, transitions, utc_offsets
from alerts.detection.rules import DECODE, TTFT, DetectorConfig
from alerts.detection.runs import Runs

ZONE = "America/New_York"


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


def evening_peak(seed: int, start: datetime, days: int) -> list[Runs]:
    """Decode and TTFT of a provider whose evening peak (18–22 h New York time, edges a quarter
    of an hour soft) is 25 % slower and 35 % higher, run at 06:09, 14:09 and 22:09 UTC with
    5 samples (σ 0.14 each, 0.06 shared by a run's), bucketed in New York's clock."""
    rng = np.random.default_rng(seed)
    t = np.array(
        [start.timestamp() + (d * 24 + h) * 3600 + 540 for d in range(days) for h in (6, 14, 22)]
    )
    hour = (t + utc_offsets(t, ZONE)) % 86_400 / 3600
    peak = 1 / (1 + np.exp(-(hour - 18) / 0.25)) / (1 + np.exp((hour - 22) / 0.25))
    shared = rng.normal(0, 0.06, len(t))
    series = []
    for level, size, sign in ((70.0, 0.75, -1), (600.0, 1.35, 1)):
        log = np.log(level) + np.log(size) * peak + sign * shared
        samples = np.exp(log[:, None] + rng.normal(0, 0.14, (len(t), 5)))
        series.append(Runs.from_samples(samples.ravel(), np.repeat(t, 5), ZONE))
    return series


def test_a_slot_the_clock_change_began_is_read_against_its_first_runs_as_the_few_they_are():
    # The March change moves the 22:09 UTC run from 17:09 to 18:09 in New York: into the
    # peak, and into the 18–24 slot, which had no runs. Days later the baseline holds its
    # first two or three runs, too few for a level of its own: the slot's expected value is
    # their mean, and its arm's standard error must say it rests on them, not on the
    # baseline's eighty runs (it did, and the slot arm opened a false alert on day 5).
    config = DetectorConfig()
    decode, ttft = evening_peak(1, datetime(2026, 2, 1, tzinfo=UTC), 53)
    change = ts(2026, 3, 8, 7)
    streaks, frozen, opened = [Streak(), Streak()], [None, None], [None, None]
    slot_arms, opens = set(), []
    for now in decode.t[decode.t > change - 3 * 86_400]:
        items = [
            SeriesInput(h.between(0, now), config.rules[m], f, o, ZONE, True, counted_at(k))
            for h, m, f, o, k in zip(
                (decode, ttft), (DECODE, TTFT), frozen, opened, streaks, strict=True
            )
        ]
        tests = assess_together(items, now=now, config=config)
        for k, judgement in enumerate(judge(tests, config)):
            streaks[k], transition = advance(
                streaks[k], judgement.verdict, config, recovered=judgement.recovered,
                fresh=judgement.fresh, new_normal=judgement.new_normal, at=float(now),
            )  # fmt: skip
            if transition == Transition.OPEN:
                opens.append((datetime.fromtimestamp(now, UTC), judgement.arm))
            slot_arms |= {a.name for a in tests[k].arms if a.name.startswith("slot")}
    assert opens == []
    # The slots are New York's, and say so.
    assert "slot 18–24 America/New_York" in slot_arms
    assert not any(name.endswith("UTC") for name in slot_arms)
