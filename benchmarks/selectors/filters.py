"""Leaderboard filters: parsed once from a query string, shared by the page and the API."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, time
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from ..buckets import BUCKETS
from ..models import Vantage, Workload

# Window choices in hours, keyed by how they are written in a URL.
WINDOWS: dict[str, int] = {
    "24h": 24,
    "72h": 72,
    "7d": 168,
    "30d": 720,
    "90d": 2160,
    "365d": 8760,
}
# Windows the leaderboard (and the pages built on it) reads from rollup sketches (whole UTC
# days, each figure within 1 % of exact); shorter ones stay exact, read from the runs.
SKETCHED_WINDOW_HOURS = frozenset({720, 2160, 8760})
DEFAULT_WINDOW_HOURS = 72
PEAK = "peak"

# Sort keys: the column and whether a smaller value is better. "-key" reverses the order.
SORT_KEYS: dict[str, bool] = {
    "ttft": True,
    "decode": False,
    "e2e": True,
    "prefill": True,
    "decode_c1": False,
    "decode_c10": False,
    "decode_peak": False,
    "throughput": False,
    "price_in": True,
    "price_out": True,
    "cost": True,
    "errors": True,
    "samples": False,
    "last_run": False,
    "name": True,
}
DEFAULT_SORT = "decode"


def window_label(hours: int) -> str:
    for label, value in WINDOWS.items():
        if value == hours:
            return label
    return f"{hours}h"


def _bad(field: str, message: str) -> ValidationError:
    return ValidationError({field: [f"{field}: {message}"]})


def _first(query: Mapping[str, Any], name: str) -> str:
    """The last value of a parameter as a stripped string ('' when absent)."""
    getlist = getattr(query, "getlist", None)
    values = getlist(name) if getlist else [query.get(name)]
    value = values[-1] if values else None
    return "" if value is None else str(value).strip()


@dataclass(frozen=True, slots=True)
class BoardFilters:
    """What the leaderboard shows.

    workload: slug; None = the default (base context, concurrency 1), or, when only a
        concurrency is given, every base-context workload run at that concurrency.
    concurrency: requests in flight (an int ≥ 1) or "peak" (workloads run at each endpoint's
        peak); None = no constraint beyond the workload.
    tod_bucket: UTC time-of-day bucket 0–3 (see benchmarks.buckets); None = all day.
    window_hours: how far back from now runs count (24, 72, 168, 720, 2160 or 8760).
    vantage: slug; None = the default vantage. Numbers from different vantages never mix.
    sort: a key of SORT_KEYS, best first; prefixed with "-" for the reverse order.
    since, until: an explicit window [since, until) instead of window_hours (a calendar month
        of the monthly report, docs/dashboard.md); always read exactly from the runs.
    """

    workload: str | None = None
    concurrency: int | str | None = None
    tod_bucket: int | None = None
    window_hours: int = DEFAULT_WINDOW_HOURS
    vantage: str | None = None
    sort: str = DEFAULT_SORT
    since: datetime | None = None
    until: datetime | None = None

    @classmethod
    def from_query(cls, query: Mapping[str, Any]) -> "BoardFilters":
        """Parse GET parameters; raises ValidationError naming the bad field."""
        workload = _first(query, "workload") or None
        if workload and not Workload.objects.filter(slug=workload).exists():
            raise _bad("workload", f"no workload with slug {workload!r}.")
        vantage = _first(query, "vantage") or None
        if vantage and not Vantage.objects.filter(slug=vantage).exists():
            raise _bad("vantage", f"no vantage with slug {vantage!r}.")
        start, end = _parse_instant(query, "since"), _parse_instant(query, "until")
        if start and end and start >= end:
            raise _bad("until", "must be after since.")
        return cls(
            workload=workload,
            concurrency=_parse_concurrency(_first(query, "concurrency")),
            tod_bucket=_parse_tod(_first(query, "tod")),
            window_hours=_parse_window(_first(query, "window")),
            vantage=vantage,
            sort=_parse_sort(_first(query, "sort")),
            since=start,
            until=end,
        )

    @property
    def sort_key(self) -> str:
        return self.sort.removeprefix("-")

    @property
    def window(self) -> str:
        return window_label(self.window_hours)

    @property
    def bounded(self) -> bool:
        """Whether an explicit since/until replaces the window back from now."""
        return self.since is not None or self.until is not None

    @property
    def sketched(self) -> bool:
        """Whether the board reads this window from rollup sketches instead of the runs."""
        return self.window_hours in SKETCHED_WINDOW_HOURS and not self.bounded

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def as_query(self) -> dict[str, str]:
        """The non-default filters as GET parameters (for links that keep the filters)."""
        params = {
            "workload": self.workload or "",
            "concurrency": "" if self.concurrency is None else str(self.concurrency),
            "tod": "" if self.tod_bucket is None else str(self.tod_bucket),
            "window": "" if self.window_hours == DEFAULT_WINDOW_HOURS else self.window,
            "vantage": self.vantage or "",
            "sort": "" if self.sort == DEFAULT_SORT else self.sort,
            "since": self.since.isoformat() if self.since else "",
            "until": self.until.isoformat() if self.until else "",
        }
        return {key: value for key, value in params.items() if value}


def _parse_instant(query: Mapping[str, Any], field: str) -> datetime | None:
    """An ISO 8601 date or date-time; one without an offset is in the install's TIME_ZONE."""
    raw = _first(query, field)
    if raw == "":
        return None
    try:
        value = parse_datetime(raw)
        if value is None and (day := parse_date(raw)) is not None:
            value = datetime.combine(day, time.min)
    except ValueError:
        value = None
    if value is None or not 1970 <= value.year <= 9998:
        raise _bad(field, f"give an ISO 8601 date or date-time (got {raw[:40]!r}).")
    return timezone.make_aware(value) if timezone.is_naive(value) else value


def _parse_concurrency(raw: str) -> int | str | None:
    if raw in ("", "any"):
        return None
    if raw.lower() == PEAK:
        return PEAK
    if not raw.isdigit() or not 1 <= int(raw) <= 100_000:
        raise _bad("concurrency", f'give a whole number ≥ 1 or "peak" (got {raw!r}).')
    return int(raw)


def _parse_tod(raw: str) -> int | None:
    if raw in ("", "all"):
        return None
    if not raw.isdigit() or int(raw) not in BUCKETS:
        choices = ", ".join(f"{key} ({label})" for key, label in BUCKETS.items())
        raise _bad("tod", f"choose a time-of-day bucket: {choices} (got {raw!r}).")
    return int(raw)


def _parse_window(raw: str) -> int:
    if raw == "":
        return DEFAULT_WINDOW_HOURS
    if raw in WINDOWS:
        return WINDOWS[raw]
    if raw.isdigit() and int(raw) in WINDOWS.values():
        return int(raw)
    raise _bad("window", f"choose one of {', '.join(WINDOWS)} (got {raw!r}).")


def _parse_sort(raw: str) -> str:
    if raw == "":
        return DEFAULT_SORT
    if raw.removeprefix("-") not in SORT_KEYS:
        raise _bad("sort", f"choose one of {', '.join(SORT_KEYS)}, optionally prefixed by '-'.")
    return raw
