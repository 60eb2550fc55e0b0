"""A history's figures over a long window, read from the window and day rollups.

docs/design.md ("History charts over 90 days"): over 90 days the summary, time-of-day profile,
concurrency curve and context figures are the board's sketched figures of the window's whole
UTC days (rollups.read: one window row per key through yesterday plus today's day rows), and
errors by category the counts the day and month rollups keep. The same keys and shapes as the
exact figures of selectors.history, so the page and the API read either.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.utils import timezone

from ..buckets import BUCKETS
from ..models import RunRollup, Vantage, Workload
from ..rollups import packed, read, sketch
from ..rollups.read import QUARTILES
from .runs import tallied
from .scope import Workloads

Row = dict[str, Any]
Figures = dict[str, Any]


def history_figures(
    ids: list[int],
    workload: Workload | None,
    workloads: Workloads,
    *,
    vantage: Vantage | None,
    window_hours: int,
    now: datetime | None = None,
) -> dict[int, Figures]:
    """Per endpoint id: "summary" (of `workload`'s runs), "tod_profile", "concurrency" (base-
    context workloads) and "context" (base vs long-context figures, without pairs)."""
    base, long = workloads.base(), workloads.long()
    curve = {w.id for w in workloads.items if w.context_tokens == 0}
    needed = curve | {w.id for w in (workload, base, long) if w is not None}
    scope = {"vantage": vantage, "window_hours": window_hours, "endpoint_ids": ids, "now": now}
    rows = read.rollup_rows(tod_bucket=None, workload_ids=needed, **scope)
    chosen = [row for row in rows if workload is not None and row["workload_id"] == workload.id]
    by_bucket = (
        read.rollup_rows(tod_bucket=None, buckets=True, workload_ids=[workload.id], **scope)
        if workload is not None
        else []
    )
    summaries = _summaries(chosen)
    profiles = _profiles(by_bucket)
    curves = _curves([row for row in rows if row["workload_id"] in curve])
    contexts = _contexts(rows, base, long)
    return {
        i: {
            "summary": summaries.get(i) or _summary_of(None, None, i),
            "tod_profile": [
                profiles.get((i, b)) or _bucket_of(None, None, (i, b)) for b in BUCKETS
            ],
            "concurrency": curves.get(i, []),
            "context": contexts(i),
        }
        for i in ids
    }


def _merged(
    rows: list[Row], group_of: Callable[[Row], Any], metrics: Iterable[str]
) -> tuple[packed.Merged, dict[Any, dict[str, int]]]:
    """The rows' sketches merged per group (after read.settle) and each group's counts."""
    metrics = list(metrics)
    rows = read.settle(rows, group_of, metrics)
    merged = packed.Merged([(group_of(row), row["bins"]) for row in rows], metrics)
    totals: dict[Any, dict[str, int]] = {}
    for row in rows:
        total = totals.setdefault(group_of(row), Counter())
        for field in ("runs", "ok_count", "error_count", "saturated_runs"):
            total[field] += row[field]
    return merged, totals


def _named(values: list[float | None]) -> dict[str, float | None]:
    return dict(zip(("p25", "p50", "p75"), values, strict=True))


def _endpoint(row: Row) -> int:
    return row["endpoint_id"]


def _summaries(rows: list[Row]) -> dict[int, Figures]:
    merged, totals = _merged(rows, _endpoint, ("ttft", "decode", "e2e"))
    return {group: _summary_of(merged, total, group) for group, total in totals.items()}


def _summary_of(merged: packed.Merged | None, total: dict | None, group: int) -> Figures:
    total = total or Counter()
    ok, errors = total["ok_count"], total["error_count"]

    def quartiles(metric: str) -> dict[str, float | None]:
        return _named(merged.quantiles(group, metric, QUARTILES) if merged else [None] * 3)

    return {
        "runs": total["runs"],
        "samples": ok + errors,
        "errors": errors,
        "saturated_runs": total["saturated_runs"],
        "error_rate": errors / (ok + errors) if ok + errors else None,
        "ttft_ms": quartiles("ttft"),
        "decode_tps": quartiles("decode"),
        "e2e_ms": quartiles("e2e"),
    }


def _profiles(rows: list[Row]) -> dict[tuple[int, int], Figures]:
    def group_of(row: Row) -> tuple[int, int]:
        return (row["endpoint_id"], row["tod_bucket"])

    merged, totals = _merged(rows, group_of, ("ttft", "decode"))
    return {group: _bucket_of(merged, total, group) for group, total in totals.items()}


def _bucket_of(merged: packed.Merged | None, total: dict | None, group: tuple) -> Figures:
    def quartiles(metric: str) -> dict[str, float | None]:
        return _named(merged.quantiles(group, metric, QUARTILES) if merged else [None] * 3)

    return {
        "bucket": group[1],
        "label": BUCKETS[group[1]],
        "runs": total["runs"] if total else 0,
        "ttft_ms": quartiles("ttft"),
        "decode_tps": quartiles("decode"),
    }


def _curves(rows: list[Row]) -> dict[int, list[Figures]]:
    """Per endpoint: median decode, throughput and TTFT per concurrency, lowest first."""

    def group_of(row: Row) -> tuple[int, int]:
        return (row["endpoint_id"], row["concurrency"])

    merged, totals = _merged(rows, group_of, ("decode", "throughput", "ttft"))
    curves: dict[int, list[Figures]] = {}
    for group in sorted(totals):
        endpoint_id, concurrency = group
        curves.setdefault(endpoint_id, []).append(
            {
                "concurrency": concurrency,
                "runs": totals[group]["runs"],
                "saturated_runs": totals[group]["saturated_runs"],
                "decode_tps_per_user": merged.quantiles(group, "decode", [0.5])[0],
                "throughput_tps": merged.quantiles(group, "throughput", [0.5])[0],
                "ttft_ms": merged.quantiles(group, "ttft", [0.5])[0],
            }
        )
    return curves


def _contexts(
    rows: list[Row], base: Workload | None, long: Workload | None
) -> Callable[[int], Figures]:
    """Per endpoint: base and long-context TTFT quartiles and the paired deltas' median (the
    prefill sketch: one value per slot with both runs, kept on the long-context rows)."""
    if base is None or long is None:
        return lambda _: {"context_tokens": None, "prefill_cost_ms": None}
    pair = (base.id, long.id)
    kept = [row for row in rows if row["workload_id"] in pair]

    def group_of(row: Row) -> tuple[int, int]:
        return (row["endpoint_id"], row["workload_id"])

    merged, _ = _merged(kept, group_of, ("ttft", "prefill"))
    code = sketch.METRIC_CODES["prefill"]
    paired: Counter[int] = Counter()
    for row in kept:
        if row["workload_id"] == long.id:
            bins = row["bins"]
            paired[row["endpoint_id"]] += int(bins[bins[:, 0] == code, 2].sum())

    def figures(i: int) -> Figures:
        return {
            "context_tokens": long.context_tokens,
            "base_ttft_ms": _named(merged.quantiles((i, base.id), "ttft", QUARTILES)),
            "long_ttft_ms": _named(merged.quantiles((i, long.id), "ttft", QUARTILES)),
            "prefill_cost_ms": merged.quantiles((i, long.id), "prefill", [0.5])[0],
            "paired_slots": paired[i],
        }

    return figures


def errors_by_category(
    endpoint_id: int, *, vantage: Vantage | None, window_hours: int, now: datetime | None = None
) -> list[dict[str, Any]]:
    """Error samples per category over the window's whole UTC days, most first: the counts
    the day and month rollups keep (window rollups have none), not each run's summary."""
    if vantage is None:
        return []
    tallies = RunRollup.objects.filter(
        read.window_q(window_hours, now=now or timezone.now()),
        endpoint_id=endpoint_id,
        vantage=vantage,
        error_count__gt=0,
    ).values_list("errors_by_category", flat=True)
    return tallied(tallies)
