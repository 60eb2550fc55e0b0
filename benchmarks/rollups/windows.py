"""Window rollups: each long window's day and month rollups pre-merged per key, through
yesterday; refreshed once a UTC day (a beat task) and rebuilt by `manage.py rebuild_rollups`.

A board reads one window row per key plus today's day rows, so its cost does not grow with the
length of the window or of the history. A run that finishes for a past day (late) is also added
to the window rows that cover that day.
"""

from collections import Counter
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..models import RunRollup, WindowRollup
from . import packed, sketch

# Whole-day lengths of the sketched windows (30 d, 90 d, 365 d).
WINDOW_DAYS = (30, 90, 365)
ALL = WindowRollup.ALL_BUCKETS


def _next_month(day: date) -> date:
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1)


def days_q(first_day: date, last_day: date) -> Q:
    """Rollup rows covering each UTC day from first_day to last_day once: month rows for the
    months wholly inside, day rows for the rest."""
    first_full = first_day if first_day.day == 1 else _next_month(first_day)
    months = []
    month = first_full
    while _next_month(month) - timedelta(days=1) <= last_day:
        months.append(month)
        month = _next_month(month)
    if not months:
        return Q(span="day", day__gte=first_day, day__lte=last_day)
    return (
        Q(span="month", day__in=months)
        | Q(span="day", day__gte=first_day, day__lt=months[0])
        | Q(span="day", day__gte=_next_month(months[-1]), day__lte=last_day)
    )


def first_day(days: int, through_day: date) -> date:
    return through_day - timedelta(days=days - 1)


def is_fresh(*, today: date | None = None) -> bool:
    today = today or timezone.now().date()
    through = today - timedelta(days=1)
    done = set(
        WindowRollup.objects.filter(through_day=through).values_list("days", flat=True).distinct()
    )
    return done >= set(WINDOW_DAYS) or not RunRollup.objects.exists()


def refresh(*, today: date | None = None, force: bool = False) -> int:
    """Write every window's rows through yesterday (unless already there); rows written."""
    today = today or timezone.now().date()
    through = today - timedelta(days=1)
    written = 0
    for days in WINDOW_DAYS:
        if not force and WindowRollup.objects.filter(days=days, through_day=through).exists():
            continue
        rows = _merge(RunRollup.objects.filter(days_q(first_day(days, through), through)))
        with transaction.atomic():
            WindowRollup.objects.filter(days=days).delete()
            WindowRollup.objects.bulk_create(
                _objects(rows, days=days, through=through), batch_size=1_000
            )
        written += len(rows)
    return written


def _merge(rollups) -> dict[tuple, dict[str, Any]]:
    fields = ("endpoint_id", "workload_id", "vantage_id", "concurrency", "tod_bucket")
    merged: dict[tuple, dict[str, Any]] = {}
    values = rollups.values(
        *fields, "runs", "ok_count", "error_count", "saturated_runs", "sketches"
    )
    for row in values.order_by().iterator(chunk_size=5_000):
        bins = sketch.triples(row["sketches"])
        for bucket in (row["tod_bucket"], ALL):
            key = (*(row[f] for f in fields[:4]), bucket)
            total = merged.setdefault(
                key, {"runs": 0, "ok": 0, "errors": 0, "saturated": 0, "bins": Counter()}
            )
            total["runs"] += row["runs"]
            total["ok"] += row["ok_count"]
            total["errors"] += row["error_count"]
            total["saturated"] += row["saturated_runs"]
            for metric, number, count in bins:
                total["bins"][(metric, number)] += count
    return merged


def _objects(rows: dict[tuple, dict[str, Any]], *, days: int, through: date) -> Iterable:
    for (endpoint, workload, vantage, concurrency, bucket), total in rows.items():
        yield WindowRollup(
            endpoint_id=endpoint,
            workload_id=workload,
            vantage_id=vantage,
            concurrency=concurrency,
            tod_bucket=bucket,
            days=days,
            through_day=through,
            runs=total["runs"],
            ok_count=total["ok"],
            error_count=total["errors"],
            saturated_runs=total["saturated"],
            packed=(whole := packed.pack((m, n, c) for (m, n), c in total["bins"].items())),
            near=packed.near(whole, packed.margin_of(total["runs"], days)),
        )


def add_late(
    key: tuple, *, runs: int, ok: int, errors: int, bins: list[tuple], saturated: int = 0
) -> None:
    """Add a change to one day's rollup (key as write.key_of, span "day") to the window rows
    already covering that day: only a run finishing for a past day has any."""
    endpoint, workload, vantage, concurrency, _span, day, bucket = key
    windows = WindowRollup.objects.filter(through_day__gte=day).values_list("days", "through_day")
    for days, through in windows.order_by().distinct():
        if first_day(days, through) > day:
            continue
        for tod in (bucket, ALL):
            window, _ = WindowRollup.objects.select_for_update().get_or_create(
                endpoint_id=endpoint,
                workload_id=workload,
                vantage_id=vantage,
                concurrency=concurrency,
                tod_bucket=tod,
                days=days,
                through_day=through,
            )
            window.runs += runs
            window.ok_count += ok
            window.error_count += errors
            window.saturated_runs += saturated
            window.packed = packed.add(window.packed, bins)
            window.near = packed.near(window.packed, packed.margin_of(window.runs, days))
            window.save(
                update_fields=[
                    "runs", "ok_count", "error_count", "saturated_runs", "packed", "near",
                ]
            )  # fmt: skip
