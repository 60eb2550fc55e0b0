"""Reading rollups for a long window: the leaderboard's figures from merged sketches.

A sketched window counts whole UTC days: from the day `window` ago to today, read as month
rows for the months wholly inside it and day rows for the rest (≤ ~2 months of days).
"""

from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from ..models import RunRollup, Vantage
from . import sketch

QUARTILES = (0.25, 0.5, 0.75)


def _next_month(day: date) -> date:
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1)


def window_q(window_hours: int, *, now: datetime | None = None) -> Q:
    """Rollup rows covering the UTC days from `window_hours` ago to today, each day once."""
    now = now or timezone.now()
    first_day = (now - timedelta(hours=window_hours)).date()
    this_month = now.date().replace(day=1)
    first_full = first_day if first_day.day == 1 else _next_month(first_day)
    if first_full >= this_month:
        return Q(span="day", day__gte=first_day)
    return (
        Q(span="month", day__gte=first_full, day__lt=this_month)
        | Q(span="day", day__gte=first_day, day__lt=first_full)
        | Q(span="day", day__gte=this_month)
    )


def rollup_rows(
    *,
    vantage: Vantage | None,
    window_hours: int,
    tod_bucket: int | None,
    endpoint_ids: list[int] | None,
    where: Q,
    now: datetime | None = None,
) -> Iterable[dict[str, Any]]:
    if vantage is None:
        return []
    rows = RunRollup.objects.filter(window_q(window_hours, now=now), where, vantage=vantage)
    if tod_bucket is not None:
        rows = rows.filter(tod_bucket=tod_bucket)
    if endpoint_ids is not None:
        rows = rows.filter(endpoint_id__in=endpoint_ids)
    return rows.values(
        "endpoint_id", "workload_id", "concurrency", "runs", "ok_count", "error_count", "sketches"
    ).iterator(chunk_size=5_000)


def _merge_into(total: dict[str, Any], row: dict[str, Any], metrics: Iterable[str]) -> None:
    total["runs"] += row["runs"]
    total["ok"] += row["ok_count"]
    total["errors"] += row["error_count"]
    for metric in metrics:
        sketch.merge(total["bins"].setdefault(metric, {}), row["sketches"].get(metric) or {})


def primary_stats(rows: Iterable[dict[str, Any]], *, shared: bool) -> list[dict[str, Any]]:
    """Per endpoint, the fields of the exact board's primary query, from merged sketches."""
    metrics = ["ttft", "decode", "e2e", "input_tokens", "output_tokens", "throughput"]
    merged: dict[int, dict[str, Any]] = {}
    for row in rows:
        total = merged.setdefault(
            row["endpoint_id"],
            {"runs": 0, "ok": 0, "errors": 0, "bins": {}, "concurrencies": set()},
        )
        _merge_into(total, row, metrics)
        total["concurrencies"].add(row["concurrency"])
    out = []
    for endpoint_id, total in merged.items():
        bins = total["bins"]
        group: dict[str, Any] = {
            "endpoint_id": endpoint_id,
            "runs": total["runs"],
            "ok": total["ok"],
            "errors": total["errors"],
            "input_tokens": sketch.quantiles(bins.get("input_tokens", {}), [0.5])[0],
            "output_tokens": sketch.quantiles(bins.get("output_tokens", {}), [0.5])[0],
        }
        for metric in ("ttft", "decode", "e2e"):
            values = sketch.quantiles(bins.get(metric, {}), QUARTILES)
            for name, value in zip(("p25", "p50", "p75"), values, strict=True):
                group[f"{metric}_{name}"] = value
        if shared:
            group["throughput"] = sketch.quantiles(bins.get("throughput", {}), [0.5])[0]
            group["concurrency_min"] = min(total["concurrencies"])
            group["concurrency_max"] = max(total["concurrencies"])
        out.append(group)
    return out


def concurrency_groups(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median decode and throughput per (endpoint, workload, concurrency)."""
    merged: dict[tuple[int, int, int], dict[str, Any]] = {}
    for row in rows:
        key = (row["endpoint_id"], row["workload_id"], row["concurrency"])
        total = merged.setdefault(key, {"runs": 0, "ok": 0, "errors": 0, "bins": {}})
        _merge_into(total, row, ["decode", "throughput"])
    return [
        {
            "endpoint_id": endpoint_id,
            "workload_id": workload_id,
            "concurrency": concurrency,
            "decode": sketch.quantiles(total["bins"].get("decode", {}), [0.5])[0],
            "throughput": sketch.quantiles(total["bins"].get("throughput", {}), [0.5])[0],
        }
        for (endpoint_id, workload_id, concurrency), total in merged.items()
    ]


def prefill_quartiles(rows: Iterable[dict[str, Any]]) -> dict[int, tuple]:
    """Per endpoint: (p25, p50, p75) of the paired long − base TTFT deltas."""
    merged: dict[int, dict[str, int]] = {}
    for row in rows:
        sketch.merge(
            merged.setdefault(row["endpoint_id"], {}), row["sketches"].get("prefill") or {}
        )
    return {
        endpoint_id: tuple(sketch.quantiles(bins, QUARTILES))
        for endpoint_id, bins in merged.items()
        if sketch.count(bins)
    }
