"""Leaderboard filters: parsed once from a query string, shared by the page and the API."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.core.exceptions import ValidationError

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
    """

    workload: str | None = None
    concurrency: int | str | None = None
    tod_bucket: int | None = None
    window_hours: int = DEFAULT_WINDOW_HOURS
    vantage: str | None = None
    sort: str = DEFAULT_SORT

    @classmethod
    def from_query(cls, query: Mapping[str, Any]) -> "BoardFilters":
        """Parse GET parameters; raises ValidationError naming the bad field."""
        workload = _first(query, "workload") or None
        if workload and not Workload.objects.filter(slug=workload).exists():
            raise _bad("workload", f"no workload with slug {workload!r}.")
        vantage = _first(query, "vantage") or None
        if vantage and not Vantage.objects.filter(slug=vantage).exists():
            raise _bad("vantage", f"no vantage with slug {vantage!r}.")
        return cls(
            workload=workload,
            concurrency=_parse_concurrency(_first(query, "concurrency")),
            tod_bucket=_parse_tod(_first(query, "tod")),
            window_hours=_parse_window(_first(query, "window")),
            vantage=vantage,
            sort=_parse_sort(_first(query, "sort")),
        )

    @property
    def sort_key(self) -> str:
        return self.sort.removeprefix("-")

    @property
    def window(self) -> str:
        return window_label(self.window_hours)

    @property
    def sketched(self) -> bool:
        """Whether the board reads this window from rollup sketches instead of the runs."""
        return self.window_hours in SKETCHED_WINDOW_HOURS

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
        }
        return {key: value for key, value in params.items() if value}


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
