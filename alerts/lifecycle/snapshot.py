"""The speed alert's snapshot as a typed class: what report.speed_snapshot writes and the
presenters (emails, the alert page) read.

Stored as JSON on the alert and each of its events (`to_json`); read back with `from_json`,
which takes an older event's dict as well (missing keys get the defaults below, keys it does not
know are kept in `other` and written back unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(slots=True)
class ArmFigures:
    """One arm of the test (the whole series, a time-of-day slot, …)."""

    name: str
    runs: int
    shift: float | None
    p_value: float | None


@dataclass(slots=True)
class BucketFigures:
    """The baseline model against the recent runs in one time-of-day bucket."""

    bucket: int
    label: str
    n_baseline: int
    n_recent: int
    baseline_median: float | None
    recent_median: float | None
    change: float | None


@dataclass(slots=True)
class PeerFigures:
    """The same model at another provider over the same days."""

    endpoint: str
    slug: str
    baseline_median: float | None
    recent_median: float | None
    change: float | None
    recent_runs: int


# Written only when computed (a detailed evaluation, a detector detail, a known onset).
_ONLY_WHEN_SET = ("buckets", "peers", "errors", "samples", "error_rate",
                  "baseline_error_rate", "first_bad_at", "confirmed_by")  # fmt: skip
_NESTED = {"arms": ArmFigures, "buckets": BucketFigures, "peers": PeerFigures}


def _figures(kind: type, item: dict[str, Any]) -> Any:
    names = {f.name for f in fields(kind)}
    return kind(**{name: value for name, value in item.items() if name in names})


@dataclass(slots=True)
class SpeedSnapshot:
    """One speed evaluation's numbers; times are ISO 8601 strings, shares fractions."""

    metric: str = ""
    unit: str = ""
    min_effect: float | None = None
    baseline_median: float | None = None
    recent_median: float | None = None
    shift: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_level: float | None = None
    p_value: float | None = None
    q_value: float | None = None
    family: int = 1
    n_baseline: int = 0
    n_recent: int = 0
    reason: str = ""
    baseline_start: str | None = None
    recent_start: str | None = None
    end: str | None = None
    segment_start: str | None = None
    long_start: str | None = None
    recent_hours: int = 24
    long_hours: int | None = None
    baseline_days: int = 28
    baseline_span_days: int | None = None
    arms: list[ArmFigures] = field(default_factory=list)
    # The evaluation's judgement.
    severity: str | None = None
    arm: str | None = None
    frozen: bool = False
    blind: bool = False
    verdict: str | None = None
    recovered: bool | None = None
    alert_effect: float | None = None
    # Only when computed (see _ONLY_WHEN_SET).
    buckets: list[BucketFigures] | None = None
    peers: list[PeerFigures] | None = None
    errors: int | None = None
    samples: int | None = None
    error_rate: float | None = None
    baseline_error_rate: float | None = None
    first_bad_at: str | None = None
    # The confirmation runs (ids) among the runs it was judged on (alerts/lifecycle/confirm.py)
    confirmed_by: list[int] | None = None
    other: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpeedSnapshot:
        known = {f.name for f in fields(cls)} - {"other"}
        values: dict[str, Any] = {}
        for name, value in data.items():
            if name in _NESTED and value is not None:
                value = [_figures(_NESTED[name], item) for item in value]
            values[name] = value
        other = {name: value for name, value in values.items() if name not in known}
        return cls(**{n: v for n, v in values.items() if n in known}, other=other)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "other" or (f.name in _ONLY_WHEN_SET and value is None):
                continue
            if f.name in _NESTED:
                value = [{n.name: getattr(item, n.name) for n in fields(item)} for item in value]
            data[f.name] = value
        return data | self.other
