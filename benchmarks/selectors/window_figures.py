"""The short windows' board kept exact by the write side: each endpoint's 72 h / 7 d figures.

A 72 h or 7 d board is computed exactly from the window's runs (leaderboard._exact). This
store keeps that computation's result per (vantage, window, time-of-day bucket or all day,
filter, endpoint) for the filters of materialized.covered(), each row stamped with the moment
it stops being exact (exact_until: its oldest run's slot + the window). Read here, written by
selectors.window_figures_write. The rule is docs/design.md §5, "The short windows' board".
"""

import json
from datetime import datetime
from typing import Any

from django.db import connections
from django.db.models import Q

from ..models import Vantage, WindowFigures
from .filters import BoardFilters
from .materialized import covered, filter_key, signature
from .scope import Workloads

ALL = WindowFigures.ALL_BUCKETS
# The windows kept (hours): the exact ones a board offers beyond a day.
HOURS: tuple[int, ...] = (72, 168)


def holds(filters: BoardFilters, *, vantage: Vantage | None, workloads: Workloads) -> bool:
    """Whether the store keeps this board's rows."""
    return (
        vantage is not None
        and filters.window_hours in HOURS
        and not filters.bounded
        and (filters.workload, filters.concurrency) in covered(workloads)
    )


def read(
    filters: BoardFilters, *, vantage: Vantage, workloads: Workloads, now: datetime
) -> dict[int, list[Any]]:
    """The rows exact at `now` of a board the store holds (holds()): endpoint id → figures as
    board_figures.stored_figures gives them with their text, [] for an endpoint without any.
    An endpoint absent here is computed by the caller (missing, expired, another signature)."""
    params = [
        vantage.id,
        filters.window_hours,
        ALL if filters.tod_bucket is None else filters.tod_bucket,
        filter_key(filters.workload, filters.concurrency),
        signature(workloads),
        now,
        now,
    ]
    connection = connections[WindowFigures.objects.db]
    if connection.vendor == "postgresql":
        # A constant statement (the board's hot path): no queryset to build and compile.
        with connection.cursor() as cursor:
            cursor.execute(_READ_SQL, params)
            found = cursor.fetchall()
    else:
        found = list(
            WindowFigures.objects.filter(
                Q(exact_until__isnull=True) | Q(exact_until__gte=now),
                vantage=vantage,
                hours=params[1],
                tod_bucket=params[2],
                filter_key=params[3],
                signature=params[4],
                written_at__lte=now,
            ).values_list("endpoint_id", "figures")
        )
    if not found:
        return {}
    ids, texts = zip(*found, strict=True)
    return dict(zip(ids, json.loads(f"[{','.join(texts)}]"), strict=True))


_READ_SQL = f"""
SELECT endpoint_id, figures FROM {WindowFigures._meta.db_table}
WHERE vantage_id = %s AND hours = %s AND tod_bucket = %s AND filter_key = %s
  AND signature = %s AND written_at <= %s AND (exact_until IS NULL OR exact_until >= %s)
"""  # noqa: S608  (a table name from the model; the values are parameters)
