"""The short windows' board kept exact by the write side: each endpoint's 72 h / 7 d figures.

A 72 h or 7 d board is computed exactly from the window's runs (leaderboard._exact). This
store keeps that computation's result per (vantage, window, time-of-day bucket or all day,
filter, endpoint) for the filters of materialized.covered(), each row stamped with the moment
it stops being exact (exact_until: its oldest run's slot + the window). Read here, written by
selectors.window_figures_write. The rule is docs/design.md §5, "The short windows' board".
"""

from datetime import datetime
from typing import Any

from django.db.models import Q

from ..models import Vantage, WindowFigures
from .filters import BoardFilters
from .materialized import covered, filter_key, parsed_rows, signature
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
    leaderboard.stored_figures gives them with their text, [] for an endpoint without any.
    An endpoint absent here is computed by the caller (missing, expired, another signature)."""
    rows = WindowFigures.objects.filter(
        Q(exact_until__isnull=True) | Q(exact_until__gte=now),
        vantage=vantage,
        hours=filters.window_hours,
        tod_bucket=ALL if filters.tod_bucket is None else filters.tod_bucket,
        filter_key=filter_key(filters.workload, filters.concurrency),
        signature=signature(workloads),
        written_at__lte=now,
    )
    ids, parsed = parsed_rows(rows, "figures")
    return dict(zip(ids, parsed, strict=True))
