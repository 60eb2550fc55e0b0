"""The leaderboard: one row per endpoint from Run summaries in a window (never from samples)."""

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from operator import itemgetter
from typing import Any

from django.db import connections
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from providers.archive import LIVE_ENDPOINTS
from providers.models import (
    Endpoint,
    Provider,
    families_by_model_id,
    key_configured,
    roofline_tps,
)

from ..costs import input_tokens_estimate
from ..models import Run, RunStatus, Vantage, Workload
from ..money import Prices, request_cost, usd
from ..rollups import read as rollup_read
from . import materialized, window_figures
from .board_queries import (
    MEDIAN_KEYS,
    concurrency_groups,
    concurrency_stats,
    in_workloads,
    prefill_hash_join,
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
from .scope import (
    Workloads,
    resolve_vantage,
    since,
    window_runs,
)

__all__ = ["BoardFilters", "BoardRow", "leaderboard"]


# A run whose client was saturated (any saturated sample): counted beside its figures.
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
    values = _endpoint_values(endpoint_ids)
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

    endpoints = _endpoints(figures, values)
    last_runs = _last_runs(
        [endpoint.id for endpoint in endpoints],
        workload_ids=row_workload_ids(filters, workload, workloads),
        vantage=vantage,
    )
    rows = [
        _row(
            endpoint,
            figures.get(endpoint.id, _NO_FIGURES),
            workload,
            last_runs.get(endpoint.id, _NO_RUN),
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
            figures.append(figures_text(figures[_FIGURES]))
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


# Where stored_figures' parts sit in its lists.
_HAS_STATS, _FIGURES = 0, slice(1, 1 + len(FIGURE_FIELDS))
_ERROR_RATE = 1 + FIGURE_FIELDS.index("error_rate")
_INPUT_TOKENS, _OUTPUT_TOKENS, _TEXT = (
    1 + len(FIGURE_FIELDS),
    2 + len(FIGURE_FIELDS),
    3 + len(FIGURE_FIELDS),
)
_NO_FIGURES = [False, *row_figures(None, {}, None)]


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
    """PostgreSQL: stored_figures(*_exact(...)[:3]), the same lists, built from the statements'
    rows as tuples, each figure put in its place in the list once: no dict per endpoint, per
    concurrency group or per part, no row_figures pass (~4 ms app CPU a 400-endpoint board).
    tests/dashboard/test_exact_window_sql.py checks it against _exact and stored_figures."""
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
    tail = _NO_FIGURES[_PREFILL_AT:_INPUT_TOKENS]
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
                found = figures[endpoint_id] = list(_NO_FIGURES)
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
            found = figures[endpoint_id] = list(_NO_FIGURES)
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


@dataclass(slots=True)
class _BoardEndpoint:
    """What a row shows of an endpoint and its provider, read as values: no model instances
    (two per row) and none of what a request sends."""

    id: int
    slug: str
    model: str
    display_name: str
    lane: str
    enabled: bool
    price_input_per_mtok: Decimal | None
    price_output_per_mtok: Decimal | None
    price_cached_input_per_mtok: Decimal | None
    roofline_tps: float | None
    provider_name: str
    provider_simulated: bool
    provider_enabled: bool
    key_configured: bool


_NO_RUN: tuple[Any, Any] = (None, None)


def _endpoint_values(endpoint_ids: list[int] | None) -> list[tuple[Any, ...]]:
    """_ENDPOINT_VALUES of the live endpoints in the board's order; only `endpoint_ids` when
    given."""
    endpoints = Endpoint.objects.filter(LIVE_ENDPOINTS)  # archived: history only
    if endpoint_ids is not None:
        return _value_rows(endpoints.filter(id__in=endpoint_ids).values_list(*_ENDPOINT_VALUES))
    connection = connections[endpoints.db]
    if connection.vendor != "postgresql":
        return list(endpoints.values_list(*_ENDPOINT_VALUES))
    # Every live endpoint: a constant statement, the one the queryset compiles to (its order:
    # Endpoint.Meta.ordering), without building and compiling the queryset each time.
    with connection.cursor() as cursor:
        cursor.execute(_LIVE_ENDPOINTS_SQL)
        return cursor.fetchall()


def _endpoints(figures: dict[int, list[Any]], rows: list[tuple[Any, ...]]) -> list[_BoardEndpoint]:
    """The board's endpoints among `rows` (_endpoint_values), in their order: those with data
    in the window, or enabled (with an enabled provider)."""
    found = []
    keys: dict[str, bool] = {}  # key_configured of each provider's key variable
    for values in rows:
        shown, hints = values[:9], values[9:13]
        name, simulated, provider_enabled, key_env = values[13:]
        endpoint_id, enabled = shown[0], shown[5]
        # Chosen here rather than by `id IN (every endpoint with data)` in the SQL: a board of
        # 400 endpoints would send (and parse) 400 parameters to drop the few disabled ones.
        if (enabled and provider_enabled) or figures.get(endpoint_id, _NO_FIGURES)[_HAS_STATS]:
            found.append(
                _BoardEndpoint(
                    *shown,
                    roofline_tps(*hints),
                    name,
                    simulated,
                    provider_enabled,
                    keys[key_env]
                    if key_env in keys
                    else keys.setdefault(key_env, key_configured(key_env)),
                )
            )
    return found


def _value_rows(values: QuerySet) -> list[tuple[Any, ...]]:
    """The tuples of a `.values_list(...)` query. On PostgreSQL read through a cursor: its
    columns here (ids, text, booleans, numerics as Decimal, doubles) come back from the driver
    as the ORM gives them, without its per-row iteration (a third of the time for 400 rows)."""
    connection = connections[values.db]
    if connection.vendor != "postgresql":
        return list(values)
    sql, params = values.query.get_compiler(values.db).as_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


_ENDPOINT_VALUES = (
    "id",
    "slug",
    "model",
    "display_name",
    "lane",
    "enabled",
    "price_input_per_mtok",
    "price_output_per_mtok",
    "price_cached_input_per_mtok",
    "active_params_b",
    "bytes_per_param",
    "chips",
    "chip_bandwidth_tbps",
    "provider__name",
    "provider__simulated",
    "provider__enabled",
    "provider__api_key_env",
)


_ENDPOINT_TABLE, _PROVIDER_TABLE = Endpoint._meta.db_table, Provider._meta.db_table
_LIVE_ENDPOINTS_SQL = f"""
SELECT e.id, e.slug, e.model, e.display_name, e.lane, e.enabled, e.price_input_per_mtok,
       e.price_output_per_mtok, e.price_cached_input_per_mtok, e.active_params_b,
       e.bytes_per_param, e.chips, e.chip_bandwidth_tbps, p.name, p.simulated, p.enabled,
       p.api_key_env
FROM {_ENDPOINT_TABLE} AS e INNER JOIN {_PROVIDER_TABLE} AS p ON e.provider_id = p.id
WHERE e.archived_at IS NULL AND p.archived_at IS NULL
ORDER BY p.name ASC, e.model ASC
"""  # noqa: S608  (table names from the models; no value in the SQL)


def _last_runs(
    endpoint_ids: list[int], *, workload_ids: list[int], vantage: Vantage | None
) -> dict[int, tuple[Any, Any]]:
    """(slot, status) of each endpoint's newest run of the board's workloads from this
    vantage, any age: one index probe of run_endpoint_board per endpoint."""
    if not endpoint_ids or vantage is None:
        return {}
    connection = connections[Run.objects.db]
    if connection.vendor != "postgresql":
        latest = Run.objects.filter(
            endpoint=OuterRef("pk"), workload_id__in=workload_ids, vantage=vantage
        ).order_by("-slot")
        found = (
            Endpoint.objects.filter(id__in=endpoint_ids)
            .annotate(
                last_slot=Subquery(latest.values("slot")[:1]),
                last_status=Subquery(latest.values("status")[:1]),
            )
            .values_list("id", "last_slot", "last_status")
        )
        return {endpoint_id: (slot, status) for endpoint_id, slot, status in found if slot}
    # The slot as ISO text, parsed by datetime's C parser: the driver's timestamptz loader
    # runs in Python (~3 µs a value, 400 a board); the session is in UTC (settings.TIME_ZONE),
    # so both give the same aware datetime in UTC.
    parse = datetime.fromisoformat
    found: dict[int, tuple[Any, Any]] = {}
    missing = endpoint_ids
    with connection.cursor() as cursor:
        if len(endpoint_ids) > _FEW_ENDPOINTS and len(workload_ids) == 1:
            # A whole board: the newest runs of every endpoint since a day ago, from one range
            # of run_board (~1,200 rows at 400 endpoints: 0.7 ms instead of 400 probes, 3.2).
            # An endpoint with a run since then has its newest among them (the range has no
            # end); one without is probed below.
            cursor.execute(_RECENT_RUNS_SQL, [workload_ids[0], vantage.id, _recent()])
            wanted = set(endpoint_ids)
            found = {
                endpoint_id: (parse(slot), status)
                for endpoint_id, slot, status in cursor.fetchall()
                if endpoint_id in wanted
            }
            missing = [endpoint_id for endpoint_id in endpoint_ids if endpoint_id not in found]
        if missing:
            # Two arrays as two parameters; one lateral probe per endpoint instead of a
            # subquery each for the slot and the status.
            cursor.execute(_LAST_RUNS_SQL, [missing, workload_ids, vantage.id])
            for endpoint_id, slot, status in cursor.fetchall():
                found[endpoint_id] = (parse(slot), status)
    return found


# Up to this many endpoints (the compare page's) are probed one by one.
_FEW_ENDPOINTS = 20


def _recent() -> datetime:
    return timezone.now() - timedelta(days=1)


# Each endpoint's newest slot written as text once, not each of the ~1,200 runs before the
# sort picks the newest (backend 0.73 -> 0.61 ms at 4x).
_RECENT_RUNS_SQL = f"""
SELECT newest.endpoint_id, newest.slot::text AS at, newest.status FROM (
    SELECT DISTINCT ON (r.endpoint_id) r.endpoint_id, r.slot, r.status
    FROM {Run._meta.db_table} AS r
    WHERE r.workload_id = %s AND r.vantage_id = %s AND r.slot >= %s
    ORDER BY r.endpoint_id, r.slot DESC
) AS newest
"""  # noqa: S608  (a table name from the model; the values are parameters)

_LAST_RUNS_SQL = f"""
SELECT e.id, r.slot::text, r.status
FROM unnest(%s::bigint[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT slot, status FROM {Run._meta.db_table}
    WHERE endpoint_id = e.id AND workload_id = ANY(%s::bigint[]) AND vantage_id = %s
    ORDER BY slot DESC LIMIT 1
) AS r
"""  # noqa: S608  (a table name from the model; the values are parameters)


def _status(endpoint: _BoardEndpoint, last_status: str | None, error_rate: float | None) -> str:
    if not (endpoint.enabled and endpoint.provider_enabled):
        return "disabled"
    if not endpoint.key_configured:
        return "no key"
    if last_status is None:
        return "no runs yet"
    if last_status == RunStatus.FAILED:
        return "failing"
    if last_status in ("queued", "running"):
        return "running"
    if last_status == RunStatus.PARTIAL or (error_rate or 0) >= 0.2:
        return "errors"
    return "ok"


def lane_label(name: str, lane: str) -> str:
    """A lane's row says its lane; in parentheses, so the model family stays the model's."""
    return name if lane == "standard" else f"{name} ({lane} lane)"


def _row(
    endpoint: _BoardEndpoint,
    figures: list[Any],
    workload: Workload | None,
    last_run: tuple[Any, Any],
) -> BoardRow:
    """`figures` as stored_figures gives them, in place as BoardRow's positional arguments."""
    last_slot, last_status = last_run
    price_in, price_out = endpoint.price_input_per_mtok, endpoint.price_output_per_mtok
    input_tokens, output_tokens = figures[_INPUT_TOKENS], figures[_OUTPUT_TOKENS]
    estimated = False
    if input_tokens is None and workload is not None:
        input_tokens, estimated = input_tokens_estimate(workload), True
    cost = request_cost(Prices.of(endpoint), input_tokens=input_tokens, output_tokens=output_tokens)
    return BoardRow(
        endpoint.id,
        endpoint.slug,
        lane_label(endpoint.display_name or endpoint.model, endpoint.lane),
        endpoint.model,
        endpoint.provider_name,
        endpoint.provider_simulated,
        _status(endpoint, last_status, figures[_ERROR_RATE]),
        endpoint.lane,
        *figures[_FIGURES],
        float(price_in) if price_in is not None else None,
        float(price_out) if price_out is not None else None,
        input_tokens,
        estimated,
        output_tokens,
        usd(cost),
        endpoint.roofline_tps,
        last_slot,
        last_status,
        figures_json=figures[_TEXT] if len(figures) > _TEXT else "",
    )


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
                *_NO_FIGURES[_MAIN_END:_INPUT_TOKENS],
                found[_INPUT_TOKENS],
                found[_OUTPUT_TOKENS],
            ]
            for endpoint_id, found in (stored or {}).items()
            if found[_HAS_STATS]
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
        _row(endpoint, figures.get(endpoint.id, _NO_FIGURES), workload, _NO_RUN)
        for endpoint in _endpoints(figures, _endpoint_values(None))
    ]
    return sort_rows(rows, filters.sort)
