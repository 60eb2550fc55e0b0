"""Local-time demand: time-of-day slots in a provider's demand time zone, and the daylight-
saving guard (docs/alerts.md, "Local-time demand"). Plain arrays and zoneinfo, no database.

A provider whose demand follows a local day (an evening peak in New York) moves by an hour in
UTC twice a year. Its runs are scheduled in UTC, so after the change a run measures another
local hour than before: one time-of-day slot reads slower (or faster) from the first run after
the change on, which reads as a lasting slot change. The slots follow the demand time zone when
one is set (`utc_offsets`); and whether or not one is, a finding that is that pattern, one
slot changed from its first run after a daylight-saving change of the zone (or, with none set,
of a common zone) with the other slots not worse, is held rather than opened (`dst_slot`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

import numpy as np

from benchmarks.buckets import BUCKET_HOURS

# With no demand time zone set: the zones whose changes are held (US and EU rules; Tokyo and
# most of Asia have none). Their changes fall on four dates a year.
COMMON_ZONES = (
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "Europe/London",
    "Europe/Berlin",
)
# A slot's runs before a change that show what it was like (a week: seven runs of a slot).
BEFORE_S = 7 * 86_400.0
# A slot's first run after a change is at most a day later (a slot's runs are a day apart),
# late runs allowed for.
FIRST_RUN_S = 30 * 3600.0
# The slot's runs since a change must span this long: the same hours on two days.
REPEAT_S = 20 * 3600.0
# A slot worse than this (worse-oriented log units: decode 39 % slower, TTFT 65 % higher) is
# never put down to the clock: a demand peak an hour earlier is not a collapse.
MAX_LOG_SHIFT = 0.5


@lru_cache(maxsize=256)
def _year_changes(zone: str, year: int) -> tuple[tuple[float, float], ...]:
    """A zone's UTC-offset changes in one year: (instant in Unix s, offset after it in s)."""
    tz = ZoneInfo(zone)
    start = datetime(year, 1, 1, tzinfo=UTC)
    out = []

    def offset(moment: datetime) -> float:
        return moment.astimezone(tz).utcoffset().total_seconds()  # type: ignore[union-attr]

    previous = offset(start)
    for day in range(1, 367):
        moment = start + timedelta(days=day)
        now = offset(moment)
        if now != previous:
            lo, hi = moment - timedelta(days=1), moment  # the change lies in (lo, hi]
            while hi - lo > timedelta(minutes=1):
                mid = lo + (hi - lo) / 2
                lo, hi = (mid, hi) if offset(mid) == previous else (lo, mid)
            out.append((hi.replace(second=0, microsecond=0).timestamp(), now))
            previous = now
    return tuple(out)


def _years(start: float, end: float) -> range:
    first = datetime.fromtimestamp(max(start, 0.0), UTC).year
    last = datetime.fromtimestamp(max(end, 0.0), UTC).year
    return range(first, last + 1)


def transitions(zones: Sequence[str], start: float, end: float) -> np.ndarray:
    """The instants (Unix s, sorted, deduplicated) in (start, end] when any of the zones
    changes its UTC offset."""
    found = {
        at
        for zone in zones
        for year in _years(start, end)
        for at, _ in _year_changes(zone, year)
        if start < at <= end
    }
    return np.array(sorted(found), dtype=float)


def utc_offsets(t, zone: str | None) -> np.ndarray:
    """Each time's UTC offset in `zone` (seconds; zeros with no zone): local time = t + offset."""
    t = np.asarray(t, dtype=float)
    if not zone or not len(t):
        return np.zeros(len(t))
    first = float(t.min())
    base = datetime.fromtimestamp(first, UTC).astimezone(ZoneInfo(zone)).utcoffset()
    out = np.full(len(t), base.total_seconds() if base is not None else 0.0)
    for year in _years(first, float(t.max())):
        for at, after in _year_changes(zone, year):
            if at > first:
                out[t >= at] = after
    return out


def guarded_zones(zone: str | None) -> tuple[str, ...]:
    """The zones whose daylight-saving changes the guard holds: the demand time zone when one
    is set, else the common ones."""
    return (zone,) if zone else COMMON_ZONES


def dst_slot(
    t: np.ndarray,
    bucket: np.ndarray,
    resid: np.ndarray,
    scale: np.ndarray,
    *,
    instants: np.ndarray,
    now: float,
    half: float,
) -> tuple[int, float] | None:
    """The slot (time-of-day bucket) and change instant that explain a finding as a demand that
    moved by an hour, or None.

    t, bucket, resid, scale: runs up to `now` (worse-oriented log residuals against the
    baseline, and its noise scale of each), from at least a week before the oldest instant.
    For a change at T: the slot's most likely onset (the start of the stretch to now whose
    residual sum over √length is largest, as detector.onset reads it) is its first or second
    run after T, the first within 30 h of it and the last at least 20 h after the first (the
    pattern seen on two days); its runs since T average at least `half` (half
    the minimum effect) worse and at most MAX_LOG_SHIFT, and its week before T did not; and
    the other slots' runs since T are not surely worse by `half` (their mean less two
    standard errors under it) and average at least `half` better than the slot's.
    """
    for at in instants[::-1]:  # the latest change first
        since = (t > at) & (t <= now)
        for b in np.unique(bucket[since]):
            mine = since & (bucket == b)
            first, last = np.flatnonzero(mine)[[0, -1]]
            # A daily pattern that moved repeats: the slot's runs since the change span two
            # days (a fresh step of every slot hours ago fills one slot's runs of one day).
            if t[first] - at > FIRST_RUN_S or t[last] - t[first] < REPEAT_S:
                continue
            level = float(resid[mine].mean())
            if not half <= level <= MAX_LOG_SHIFT:
                continue
            before = (bucket == b) & (t > at - BEFORE_S) & (t <= at)
            if before.any() and float(resid[before].mean()) >= half:
                continue
            # The other slots are not surely worse by half the minimum effect (two standard
            # errors), and the slot is worse than they are by at least that much: a step of
            # every slot at the change is not a shift of the day.
            others = since & (bucket != b)
            if others.any():
                mean = float(resid[others].mean())
                se = float(np.sqrt(np.sum(scale[others] ** 2))) / int(others.sum())
                if mean - 2 * se >= half or level - mean < half:
                    continue
            window = (bucket == b) & (t > at - BEFORE_S) & (t <= now)
            runs = np.flatnonzero(window)
            if _onset(resid[window]) - int(np.searchsorted(runs, first)) in (0, 1):
                return int(b), float(at)
    return None


def _onset(resid: np.ndarray) -> int:
    """Index of the most likely start of a worse stretch running to the end."""
    lengths = np.arange(len(resid), 0, -1)
    tail_sums = np.cumsum(resid[::-1])[::-1]
    return int(np.argmax(tail_sums / np.sqrt(lengths)))


def dst_hold(
    t: np.ndarray,
    bucket: np.ndarray,
    resid: np.ndarray,
    scale: np.ndarray,
    *,
    now: float,
    zone: str | None,
    half: float,
    span: float,
) -> str | None:
    """Why the series' finding at `now` is put down to a daylight-saving change within `span`
    seconds (the baseline window and the long window: after that the baseline has learnt
    the slot's new level), or None. t, bucket, resid, scale: as dst_slot's, from `span` and
    BEFORE_S before `now`; half: half the minimum effect (log units)."""
    zones = guarded_zones(zone)
    instants = transitions(zones, now - span, now)
    if not len(instants):
        return None
    found = dst_slot(t, bucket, resid, scale, instants=instants, now=now, half=half)
    if found is None:
        return None
    slot, at = found
    return (
        f"the {slot_label(slot, zone)} slot changed from its first run after the "
        f"daylight-saving change of {zone_label(at, zones)}, the other slots not worse: a "
        "demand that follows local time moves by an hour"
    )


def slot_label(bucket: int, zone: str | None) -> str:
    """A time-of-day slot's hours in the clock its runs are bucketed by: "18–24 UTC", or
    "18–24 America/New_York" for a series with that demand time zone."""
    return f"{bucket * BUCKET_HOURS:02d}–{(bucket + 1) * BUCKET_HOURS:02d} {zone or 'UTC'}"


def zone_label(at: float, zones: Sequence[str]) -> str:
    """The date of a change and which of the zones changed then, for a reason line."""
    names = [
        z
        for z in zones
        for year in _years(at, at)
        for when, _ in _year_changes(z, year)
        if when == at
    ]
    day = datetime.fromtimestamp(at, UTC).date().isoformat()
    return f"{day} ({', '.join(names) or 'daylight saving'})"
