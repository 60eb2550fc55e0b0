"""The run as the unit of evidence (docs/design.md §7).

The samples of one run share the provider's state at that moment (load, routing, cache), so
they are not independent: a series is reduced to one value per run, the 20 % trimmed mean
of its samples' log values, with the run's time-of-day bucket, day of the week and hour of
the day in UTC or the series' demand time zone. baseline.py fits a series' model on these.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from alerts.detection.local_time import utc_offsets
from benchmarks.buckets import BUCKET_HOURS

HOUR_S = 3600.0
DAY_S = 86_400.0
TRIM = 0.2  # the share of a run's samples dropped at each end (see Runs.from_samples)


@dataclass(frozen=True, slots=True)
class Runs:
    """One value per run, sorted by time: t (run slot, Unix seconds), the 20 % trimmed mean of
    its samples' logs, time-of-day bucket, the day of the week of the slot (0 = Monday) and its
    hour of the day (0–24, fractional), all in UTC or in the series' demand time zone
    (Runs.of); and whether it is an extra run, off the schedule (a confirmation run, or one a
    person asked for)."""

    t: np.ndarray
    log_value: np.ndarray
    bucket: np.ndarray
    day: np.ndarray
    hour: np.ndarray
    extra: np.ndarray

    @classmethod
    def of(cls, t, log_value, zone: str | None = None, extra=None) -> Runs:
        """Runs at times t with their values; buckets and days in the demand time `zone` (an
        IANA name; None: UTC), so they follow its daylight-saving changes (local_time);
        `extra`: which of them are extra runs (None: none)."""
        t = np.asarray(t, dtype=float)
        log_value = np.asarray(log_value, dtype=float)
        extra = np.zeros(len(t), bool) if extra is None else np.asarray(extra, dtype=bool)
        order = np.argsort(t, kind="stable")
        t, log_value, extra = t[order], log_value[order], extra[order]
        local = t + utc_offsets(t, zone) if zone else t
        bucket = ((local % DAY_S) // (BUCKET_HOURS * HOUR_S)).astype(int)
        day = ((local // DAY_S + 3) % 7).astype(int)  # 1970-01-01 was a Thursday (3)
        return cls(t, log_value, bucket, day, (local % DAY_S) / HOUR_S, extra)

    @classmethod
    def from_samples(cls, values, times, zone: str | None = None, extra_times=()) -> Runs:
        """Runs from per-sample values (tok/s or ms) and their run's slot time (Unix seconds).

        A run's value is the 20 % trimmed mean of its samples' logs (the middle three of five):
        as robust as the median to one odd request, and a fifth less noisy on normal noise,
        which is what lets a 10 % shift show within three days. Non-positive and non-finite
        values are not samples (a zero speed has no log). `extra_times`: the slots of the
        extra runs (Runs.extra)."""
        values = np.asarray(values, dtype=float)
        times = np.asarray(times, dtype=float)
        keep = np.isfinite(values) & (values > 0)
        values, times = values[keep], times[keep]
        if not len(values):
            return cls.of([], [], zone)
        order = np.lexsort((values, times))
        logs, times = np.log(values[order]), times[order]
        starts = np.flatnonzero(np.r_[True, times[1:] != times[:-1]])
        counts = np.diff(np.r_[starts, len(times)])
        run = np.repeat(np.arange(len(starts)), counts)
        rank = np.arange(len(times)) - starts[run]  # values are sorted within each run
        trim = np.minimum(np.ceil(TRIM * counts), (counts - 1) // 2).astype(int)[run]
        kept = (rank >= trim) & (rank < counts[run] - trim)
        sums = np.bincount(run[kept], weights=logs[kept], minlength=len(starts))
        means = sums / np.bincount(run[kept], minlength=len(starts))
        slots = times[starts]
        return cls.of(slots, means, zone, np.isin(slots, np.asarray(extra_times, dtype=float)))

    @property
    def weekend(self) -> np.ndarray:
        """Whether each run's slot falls on a Saturday or Sunday (in its demand time zone, UTC
        without one)."""
        return self.day >= 5

    def __len__(self) -> int:
        return len(self.t)

    def where(self, mask) -> Runs:
        """The runs a boolean mask, an index array or a slice picks."""
        return Runs(
            self.t[mask],
            self.log_value[mask],
            self.bucket[mask],
            self.day[mask],
            self.hour[mask],
            self.extra[mask],
        )

    def between(self, start: float, end: float) -> Runs:
        """Runs with start < t ≤ end."""
        lo, hi = np.searchsorted(self.t, [start, end], side="right")
        return self.between_index(lo, hi)

    def between_index(self, lo: int, hi: int) -> Runs:
        """The runs from index lo up to (not including) hi."""
        return self.where(slice(lo, hi))
