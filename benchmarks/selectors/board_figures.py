"""A board's figures per endpoint as lists: the form the materialized board stores and every
board reads (stored_figures), where each part sits in them, and the exact window's lists built
from exact_sql's statements in place (exact_stored_figures)."""

from operator import itemgetter
from typing import Any

from django.db import connections

from ..models import Run, Vantage
from .board_queries import (
    MEDIAN_KEYS,
    prefill_hash_join,
    primary,
)
from .exact_sql import ExactWindow, primary_workloads
from .filters import BoardFilters
from .rows import FIGURE_FIELDS, figures_text
from .scope import Workloads


def row_figures(
    stats: dict[str, Any] | None, concurrency: dict[str, Any], prefill: dict[str, Any] | None
) -> list[Any]:
    """A row's figures (rows.FIGURE_FIELDS, in order) from its three parts, then the measured
    input and output tokens (the cost and the input estimate are the row's, at read time)."""
    stats, prefill = stats or {}, prefill or {}
    errors = stats.get("errors") or 0
    samples = (stats.get("ok") or 0) + errors
    of = concurrency.get
    return [
        stats.get("runs") or 0,
        samples,
        errors,
        stats.get("saturated_runs") or 0,
        errors / samples if samples else None,
        *(stats.get(key) for key in MEDIAN_KEYS),
        prefill.get("prefill_cost_ms"),
        prefill.get("prefill_cost_p25_ms"),
        prefill.get("prefill_cost_p75_ms"),
        prefill.get("prefill_context_tokens"),
        of("decode_tps_c1"),
        of("decode_tps_c10"),
        of("decode_tps_peak"),
        of("runs_c1", 0),
        of("saturated_runs_c1", 0),
        of("runs_c10", 0),
        of("saturated_runs_c10", 0),
        of("runs_peak", 0),
        of("saturated_runs_peak", 0),
        of("throughput_tps"),
        of("throughput_concurrency"),
        stats.get("input_tokens"),
        stats.get("output_tokens"),
    ]


def stored_figures(
    stats: dict, by_concurrency: dict, prefill: dict, *, texts: bool = False
) -> dict[int, list[Any]]:
    """Per endpoint with any figure: [whether it has main-column figures, *row_figures], and
    with `texts` their figures_text last: the form the materialized board stores (with the
    text) and a board reads."""
    found = {}
    for endpoint_id in stats.keys() | by_concurrency.keys() | prefill.keys():
        figures = row_figures(
            stats.get(endpoint_id), by_concurrency.get(endpoint_id, {}), prefill.get(endpoint_id)
        )
        found[endpoint_id] = [endpoint_id in stats, *figures]
        if texts:
            found[endpoint_id].append(figures_text(figures[: len(FIGURE_FIELDS)]))
    return found


# Where stored_figures' parts sit in its lists.
HAS_STATS, FIGURE_SLICE = 0, slice(1, 1 + len(FIGURE_FIELDS))
ERROR_RATE_AT = 1 + FIGURE_FIELDS.index("error_rate")
INPUT_TOKENS_AT, OUTPUT_TOKENS_AT, TEXT_AT = (
    1 + len(FIGURE_FIELDS),
    2 + len(FIGURE_FIELDS),
    3 + len(FIGURE_FIELDS),
)
NO_FIGURES = [False, *row_figures(None, {}, None)]

# Where a figure sits in stored_figures' lists, by FIGURE_FIELDS name.
_AT = {name: 1 + index for index, name in enumerate(FIGURE_FIELDS)}
_PREFILL_AT = _AT["prefill_cost_ms"]
_CONCURRENCY_AT = _AT["decode_tps_c1"]
_THROUGHPUT_AT = _AT["throughput_tps"]
# A concurrency column's (decode, runs, saturated runs) places in stored_figures' lists.
_COLUMN_AT = {
    column: (_AT[f"decode_tps_{column}"], _AT[f"runs_{column}"], _AT[f"saturated_runs_{column}"])
    for column in ("c1", "c10", "peak")
}


def exact_stored_figures(
    filters: BoardFilters,
    *,
    vantage: Vantage,
    endpoint_ids: list[int] | None,
    workloads: Workloads,
) -> dict[int, list[Any]]:
    """PostgreSQL: stored_figures(*leaderboard._exact(...)[:3]), the same lists, built from
    the statements' rows as tuples, each figure put in its place in the list once: no dict per
    endpoint, per concurrency group or per part, no row_figures pass (~4 ms app CPU a
    400-endpoint board). tests/dashboard/test_exact_window_sql.py checks it against
    leaderboard._exact and stored_figures."""
    _, workload = primary(filters, workloads)
    shared = (
        workload if filters.concurrency is None and workload in workloads.base_context() else None
    )
    database = Run.objects.db
    window = ExactWindow(filters, vantage=vantage, endpoint_ids=endpoint_ids, database=database)
    ids, concurrency = primary_workloads(filters, workloads)
    figures: dict[int, list[Any]] = {}
    # Per endpoint: the shared workload's one group, from the primary row (see concurrency_stats).
    groups: list[tuple[Any, ...]] = []
    mixed = []
    tail = NO_FIGURES[_PREFILL_AT:INPUT_TOKENS_AT]
    for row in window.primary_tuples(ids, concurrency=concurrency, shared=shared is not None):
        endpoint_id, runs, ok, errors, saturated, input_tokens, output_tokens = row[:7]
        errors = errors or 0
        samples = (ok or 0) + errors
        figures[endpoint_id] = [
            True,
            runs or 0,
            samples,
            errors,
            saturated or 0,
            errors / samples if samples else None,
            *row[7:16],
            *tail,
            input_tokens,
            output_tokens,
        ]
        if shared is not None:
            throughput, lowest, highest = row[16:19]
            if lowest != highest:
                mixed.append(endpoint_id)
            else:
                # (endpoint, workload, concurrency, decode p50, throughput, runs, saturated)
                groups.append(
                    (endpoint_id, shared.id, lowest, row[11], throughput, runs, saturated)
                )
    concurrency_of = {w.id: w.concurrency for w in workloads.base_context()}
    queried = [w for w in concurrency_of if shared is None or w != shared.id]
    groups += window.group_tuples(queried, None)
    if mixed and shared is not None:
        groups += window.group_tuples([shared.id], mixed)
    _place_groups(figures, groups, concurrency_of)
    long = workloads.long()
    base = workloads.base()
    if base is not None and long is not None:
        rows = prefill_hash_join(
            connections[database],
            base=base,
            long=long,
            vantage=vantage,
            filters=filters,
            endpoint_ids=endpoint_ids,
        )
        for endpoint_id, low, mid, high in rows:
            found = figures.get(endpoint_id)
            if found is None:
                found = figures[endpoint_id] = list(NO_FIGURES)
            found[_PREFILL_AT : _PREFILL_AT + 4] = mid, low, high, long.context_tokens
    return figures


def _place_groups(
    figures: dict[int, list[Any]], groups: list[tuple[Any, ...]], concurrency_of: dict[int, int]
) -> None:
    """concurrency_stats' columns from (endpoint, workload, concurrency, decode, throughput,
    runs, saturated) groups, put in place in `figures` (an endpoint without a list gets one)."""
    # Later groups win ties below: their order fixed (workload, then concurrency).
    groups.sort(key=_GROUP_KEY)
    chosen: dict[int, int] = {}  # each endpoint's concurrency of its throughput so far
    for endpoint_id, workload_id, concurrency, decode, throughput, runs, saturated in groups:
        found = figures.get(endpoint_id)
        if found is None:
            found = figures[endpoint_id] = list(NO_FIGURES)
        column = None
        if concurrency_of[workload_id] == 0:
            column = "peak"
        elif concurrency in (1, 10):
            column = f"c{concurrency}"
        if column is not None:
            decode_at, runs_at, saturated_at = _COLUMN_AT[column]
            found[decode_at], found[runs_at], found[saturated_at] = decode, runs, saturated
        # Aggregate throughput is most telling at the highest concurrency measured.
        if throughput is not None and concurrency >= chosen.get(endpoint_id, 0):
            chosen[endpoint_id] = concurrency
            found[_THROUGHPUT_AT : _THROUGHPUT_AT + 2] = throughput, concurrency


# A group's (endpoint, workload, concurrency).
_GROUP_KEY = itemgetter(0, 1, 2)
