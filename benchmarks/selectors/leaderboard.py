"""The leaderboard: one row per endpoint from Run summaries in a window (never from samples)."""

from dataclasses import replace
from datetime import datetime
from typing import Any

from django.db import connections
from django.utils import timezone

from providers.models import families_by_model_id

from ..models import Run, Vantage, Workload
from ..rollups import read as rollup_read
from . import materialized, window_figures
from .board_endpoints import NO_RUN, board_endpoints, board_row, endpoint_values, last_runs
from .board_figures import (
    FIGURE_SLICE,
    HAS_STATS,
    INPUT_TOKENS_AT,
    NO_FIGURES,
    OUTPUT_TOKENS_AT,
    exact_stored_figures,
    stored_figures,
)
from .board_queries import (
    concurrency_groups,
    concurrency_stats,
    in_workloads,
    prefill_stats,
    primary,
    primary_match,
    primary_stats,
    row_workload_ids,
    rows_in,
)
from .exact_sql import ExactWindow, primary_workloads
from .filters import BoardFilters
from .rows import FIGURE_FIELDS, BoardRow, figures_text, mark_ties, sort_rows
from .scope import Workloads, resolve_vantage, since, window_runs

__all__ = ["BoardFilters", "BoardRow", "leaderboard"]


def leaderboard(
    filters: BoardFilters, *, endpoint_ids: list[int] | None = None, texts: bool = False
) -> list[BoardRow]:
    """Rows sorted and ranked by `filters.sort`, ties marked; endpoints without data last.

    endpoint_ids: only these endpoints (the compare page); None = every endpoint.
    texts: rows read from the materialized board keep its figures' JSON text (figures_json,
    which only the API's compact answer writes).
    """
    vantage = resolve_vantage(filters.vantage)
    workloads = Workloads.load()
    # A covered long board is read as materialized (one row per endpoint, no merge); the
    # compare page (endpoint_ids) and anything not covered merge the rollups.
    stored = (
        materialized.read(filters, vantage=vantage, workloads=workloads, texts=texts)
        if endpoint_ids is None
        else None
    )
    values = endpoint_values(endpoint_ids)
    if (
        stored is None
        and endpoint_ids is None
        and window_figures.holds(filters, vantage=vantage, workloads=workloads)
    ):
        stored = _kept_figures(filters, vantage=vantage, workloads=workloads, values=values)
    if stored is not None:
        figures = stored
        workload = primary(filters, workloads)[1]
    elif not filters.sketched and _reads_statements(vantage):
        figures = exact_stored_figures(
            filters, vantage=vantage, endpoint_ids=endpoint_ids, workloads=workloads
        )
        workload = primary(filters, workloads)[1]
    else:
        if filters.sketched:
            stats, by_concurrency, prefill, workload = _sketched(
                filters, vantage=vantage, endpoint_ids=endpoint_ids, workloads=workloads
            )
        else:
            stats, by_concurrency, prefill, workload = _exact(
                filters, vantage=vantage, endpoint_ids=endpoint_ids, workloads=workloads
            )
        figures = stored_figures(stats, by_concurrency, prefill)

    endpoints = board_endpoints(figures, values)
    newest = last_runs(
        [endpoint.id for endpoint in endpoints],
        workload_ids=row_workload_ids(filters, workload, workloads),
        vantage=vantage,
    )
    rows = [
        board_row(
            endpoint,
            figures.get(endpoint.id, NO_FIGURES),
            workload,
            newest.get(endpoint.id, NO_RUN),
        )
        for endpoint in endpoints
    ]
    adopt_families(rows)
    rows = sort_rows(rows, filters.sort)
    mark_ties(rows, filters.sort)
    return rows


def adopt_families(rows: list[BoardRow]) -> None:
    """A row named only by its model id joins the family its model's named endpoints form."""
    unnamed = [row for row in rows if row.label == row.model]
    if unnamed:
        families = families_by_model_id()
        for row in unnamed:
            row.named_family = families.get(row.model, "")


def exact_figures(
    filters: BoardFilters,
    *,
    vantage: Vantage,
    endpoint_ids: list[int] | None,
    workloads: Workloads,
    now: datetime,
    texts: bool = False,
) -> dict[int, list[Any]]:
    """stored_figures of the exact window ending at `now` (not at whatever time its statements
    run): what the short windows' store keeps of an endpoint, and what a read of the store
    computes for an endpoint it has no exact row of."""
    pinned = replace(filters, since=since(filters.window_hours, now=now))
    if not _reads_statements(vantage):
        stats, by_concurrency, prefill, _ = _exact(
            pinned, vantage=vantage, endpoint_ids=endpoint_ids, workloads=workloads
        )
        return stored_figures(stats, by_concurrency, prefill, texts=texts)
    found = exact_stored_figures(
        pinned, vantage=vantage, endpoint_ids=endpoint_ids, workloads=workloads
    )
    if texts:
        for figures in found.values():
            figures.append(figures_text(figures[FIGURE_SLICE]))
    return found


def _kept_figures(
    filters: BoardFilters,
    *,
    vantage: Vantage,
    workloads: Workloads,
    values: list[tuple[Any, ...]],
) -> dict[int, list[Any]]:
    """A short board's figures: the store's rows exact now, and the live endpoints it has no
    such row of computed exactly, back from the same now (selectors.window_figures)."""
    now = timezone.now()
    kept = window_figures.read(filters, vantage=vantage, workloads=workloads, now=now)
    missing = [row[0] for row in values if row[0] not in kept]
    figures = {endpoint_id: found for endpoint_id, found in kept.items() if found}
    if missing:
        figures.update(
            exact_figures(
                filters, vantage=vantage, endpoint_ids=missing, workloads=workloads, now=now
            )
        )
    return figures


def _exact(
    filters: BoardFilters,
    *,
    vantage: Vantage | None,
    endpoint_ids: list[int] | None,
    workloads: Workloads,
) -> tuple[dict, dict, dict, Workload | None]:
    """(stats, by_concurrency, prefill, workload) from the runs of the window."""
    where, workload = primary(filters, workloads)
    # When the main columns are one base-context workload (the default board), the primary
    # query also yields that workload's concurrency figures: one range scan fewer.
    shared = (
        workload if filters.concurrency is None and workload in workloads.base_context() else None
    )
    database = Run.objects.db  # the replica, where one serves reads
    if vantage is not None and connections[database].vendor == "postgresql":
        window = ExactWindow(filters, vantage=vantage, endpoint_ids=endpoint_ids, database=database)
        ids, concurrency = primary_workloads(filters, workloads)
        rows = window.primary_stats(ids, concurrency=concurrency, shared=shared is not None)
        stats = {row["endpoint_id"]: row for row in rows}
        groups_of = window.concurrency_groups
    else:
        runs = window_runs(
            vantage=vantage,
            window_hours=filters.window_hours,
            tod_bucket=filters.tod_bucket,
            start=filters.since,
            end=filters.until,
        )
        if endpoint_ids is not None:
            runs = runs.filter(endpoint_id__in=endpoint_ids)
        stats = {
            row["endpoint_id"]: row for row in primary_stats(runs.filter(where), shared=shared)
        }

        def groups_of(ids: list[int], endpoints: list[int] | None) -> list[dict[str, Any]]:
            return concurrency_groups(runs.filter(in_workloads(ids, endpoints)))

    by_concurrency = concurrency_stats(groups_of, workloads, shared=shared, shared_stats=stats)
    prefill = prefill_stats(workloads, vantage=vantage, filters=filters, endpoint_ids=endpoint_ids)
    return stats, by_concurrency, prefill, workload


def _reads_statements(vantage: Vantage | None) -> bool:
    """Whether _exact reads the window through exact_sql's statements (PostgreSQL)."""
    return vantage is not None and connections[Run.objects.db].vendor == "postgresql"


def _sketched(
    filters: BoardFilters,
    *,
    vantage: Vantage | None,
    endpoint_ids: list[int] | None,
    workloads: Workloads,
) -> tuple[dict, dict, dict, Workload | None]:
    """The same figures from merged rollup sketches (long windows; within 1 % of exact)."""
    # One read for every part: the main columns', the concurrency figures' and prefill's rows.
    rows = _sketched_rows(
        [filters],
        vantage=vantage,
        window_hours=filters.window_hours,
        tod_bucket=filters.tod_bucket,
        endpoint_ids=endpoint_ids,
        workloads=workloads,
    )
    stats, by_concurrency, prefill = sketched_figures(rows, filters, workloads)
    return stats, by_concurrency, prefill, primary(filters, workloads)[1]


def _sketched_rows(
    several: list[BoardFilters],
    *,
    vantage: Vantage | None,
    window_hours: int,
    tod_bucket: int | None,
    endpoint_ids: list[int] | None,
    workloads: Workloads,
) -> list[dict[str, Any]]:
    """The rollup rows that sketched_figures needs for each of `several` filters (of one
    window and bucket)."""
    needed = {w.id for w in workloads.base_context()}
    for filters in several:
        needed.update(primary_match(filters, workloads)[0])
    long = workloads.long()
    if long is not None:
        needed.add(long.id)
    return rollup_read.rollup_rows(
        workload_ids=needed,
        vantage=vantage,
        window_hours=window_hours,
        tod_bucket=tod_bucket,
        endpoint_ids=endpoint_ids,
    )


def sketched_parts(
    several: list[BoardFilters],
    *,
    vantage: Vantage,
    window_hours: int,
    tod_bucket: int | None,
    endpoint_ids: list[int] | None,
) -> dict[BoardFilters, tuple[dict, dict, dict]]:
    """(stats, by_concurrency, prefill) of each of `several` filters (of this window and
    bucket) from one read of the rollups: what the materialized board stores."""
    workloads = Workloads.load()
    rows = _sketched_rows(
        several,
        vantage=vantage,
        window_hours=window_hours,
        tod_bucket=tod_bucket,
        endpoint_ids=endpoint_ids,
        workloads=workloads,
    )
    return {filters: sketched_figures(rows, filters, workloads) for filters in several}


def sketched_figures(
    rows: list[dict[str, Any]], filters: BoardFilters, workloads: Workloads
) -> tuple[dict, dict, dict]:
    """(stats, by_concurrency, prefill) of `filters` from the window's rollup rows."""
    _, workload = primary(filters, workloads)
    shared = (
        workload if filters.concurrency is None and workload in workloads.base_context() else None
    )
    long = workloads.long()
    _, matches = primary_match(filters, workloads)
    stats = {
        row["endpoint_id"]: row
        for row in rollup_read.primary_stats(
            [row for row in rows if matches(row)], shared=shared is not None
        )
    }
    by_concurrency = concurrency_stats(
        lambda ids, endpoints: rollup_read.concurrency_groups(rows_in(rows, ids, endpoints)),
        workloads,
        shared=shared,
        shared_stats=stats,
    )
    prefill = {}
    if long is not None and workloads.base() is not None:
        deltas = rollup_read.prefill_quartiles(
            [row for row in rows if row["workload_id"] == long.id]
        )
        prefill = {
            endpoint_id: {
                "prefill_cost_ms": mid,
                "prefill_cost_p25_ms": low,
                "prefill_cost_p75_ms": high,
                "prefill_context_tokens": long.context_tokens,
            }
            for endpoint_id, (low, mid, high) in deltas.items()
        }
    return stats, by_concurrency, prefill


# Sort keys whose column main_board's rows hold: a main column, a price, the cost, a count.
MAIN_SORTS = frozenset(
    {"ttft", "decode", "e2e", "price_in", "price_out", "cost", "errors", "samples", "name"}
)
# The main columns' figures in stored_figures' lists (runs … e2e_p75_ms); then the
# prefill, concurrency and throughput columns up to the tokens.
_MAIN_END = 1 + FIGURE_FIELDS.index("prefill_cost_ms")


def main_board(filters: BoardFilters) -> list[BoardRow]:
    """The leaderboard's rows in its order with what the agent-loop and price reads use: the
    endpoint, its prices and the main columns' figures (medians and quartiles, runs, errors,
    tokens, cost per request), read without the rest (each endpoint's last run, the
    concurrency and prefill columns, ranks). Those are left as for an endpoint without runs:
    the rows are not the board's to show. A board sorted by another column, or one the
    materialized store does not hold on a long window, is read in full (leaderboard())."""
    if filters.sort_key not in MAIN_SORTS:
        return leaderboard(filters)
    vantage = resolve_vantage(filters.vantage)
    workloads = Workloads.load()
    where, workload = primary(filters, workloads)
    if filters.sketched:
        stored = materialized.read(filters, vantage=vantage, workloads=workloads)
        figures = {
            endpoint_id: [
                *found[:_MAIN_END],
                *NO_FIGURES[_MAIN_END:INPUT_TOKENS_AT],
                found[INPUT_TOKENS_AT],
                found[OUTPUT_TOKENS_AT],
            ]
            for endpoint_id, found in (stored or {}).items()
            if found[HAS_STATS]
        }
        if not figures:
            return leaderboard(filters)
    else:
        # _exact's main columns alone: no concurrency groups, no prefill pairs.
        runs = window_runs(
            vantage=vantage,
            window_hours=filters.window_hours,
            tod_bucket=filters.tod_bucket,
            start=filters.since,
            end=filters.until,
        )
        stats = {row["endpoint_id"]: row for row in primary_stats(runs.filter(where), shared=None)}
        figures = stored_figures(stats, {}, {})
    rows = [
        board_row(endpoint, figures.get(endpoint.id, NO_FIGURES), workload, NO_RUN)
        for endpoint in board_endpoints(figures, endpoint_values(None))
    ]
    return sort_rows(rows, filters.sort)
