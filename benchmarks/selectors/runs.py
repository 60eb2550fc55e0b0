"""Reading one Run row (its denormalised summary) into chart points."""

from collections import Counter
from typing import Any

from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform

from ..models import Run

RUN_POINT_FIELDS = (
    "id",
    "slot",
    "status",
    "tod_bucket",
    "concurrency",
    "ok_count",
    "error_count",
    "ttft_p50_ms",
    "decode_tps_p50",
    "e2e_p50_ms",
    "throughput_tps",
    "summary",
)
# Summary metric name for each chart metric.
_SUMMARY_METRIC = {"ttft": "ttft_ms", "decode": "decode_tps"}


def run_point(run: dict[str, Any]) -> dict[str, Any]:
    """A run as a JSON-ready chart point (values of Run fields as given by .values())."""
    return {
        "id": run["id"],
        "slot": run["slot"].isoformat(),
        "status": run["status"],
        "tod_bucket": run["tod_bucket"],
        "concurrency": run["concurrency"],
        "ok": run["ok_count"],
        "errors": run["error_count"],
        "ttft_ms": run["ttft_p50_ms"],
        "decode_tps": run["decode_tps_p50"],
        "e2e_ms": run["e2e_p50_ms"],
        "throughput_tps": run["throughput_tps"],
    }


def point_rows(runs: QuerySet[Run]) -> list[dict[str, Any]]:
    """RUN_POINT_FIELDS of the runs, with only the parts of each summary the bands read: the
    p10 and p90 scalars of each metric (decoding whole summaries, then each metric's whole
    stats, was most of a long window's time). A metric whose stats are not an object reads as
    missing scalars, which run_band turns into no band, as it does the object."""
    fields = [f for f in RUN_POINT_FIELDS if f != "summary"]
    parts = {
        f"band_{m}_{p}": KeyTransform(p, KeyTransform(key, "summary"))
        for m, key in _SUMMARY_METRIC.items()
        for p in _BAND
    }
    rows = list(runs.values(*fields, **parts))
    for row in rows:
        row["summary"] = {
            key: {p: row.pop(f"band_{m}_{p}") for p in _BAND} for m, key in _SUMMARY_METRIC.items()
        }
    return rows


_BAND = ("p10", "p90")


def run_band(run: dict[str, Any], metric: str) -> dict[str, float] | None:
    """The spread of one run's samples (p10–p90) from its summary; None when not recorded."""
    stats = (run.get("summary") or {}).get(_SUMMARY_METRIC[metric])
    if not isinstance(stats, dict):
        return None
    low, high = stats.get("p10"), stats.get("p90")
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return None
    return {"low": float(low), "high": float(high)}


def errors_by_category(runs: QuerySet[Run]) -> list[dict[str, Any]]:
    """Error samples per category over the runs, read from each run's summary, most first."""
    counts: Counter[str] = Counter()
    tallies = runs.filter(error_count__gt=0).values_list(
        KeyTransform("errors_by_category", "summary"), flat=True
    )
    for categories in tallies:
        categories = categories or {}
        if isinstance(categories, dict):
            for category, count in categories.items():
                if isinstance(count, int):
                    counts[category] += count
    return [{"category": c, "count": n} for c, n in counts.most_common()]
