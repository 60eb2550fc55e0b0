"""The leaderboard's window queries on the ORM (SQLite, and PostgreSQL where no vantage is
chosen): the main columns' runs and figures, the concurrency columns and the prefill cost, each
a dict per endpoint. On PostgreSQL with a vantage, exact_sql's statements read the same."""

from collections.abc import Callable, Iterable
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections, transaction
from django.db.models import Count, Max, Min, Q, QuerySet, Sum

from ..models import Run, Vantage, Workload
from .aggregates import SQLITE_QUARTILES, Percentile, Quartiles, register_sqlite
from .exact_sql import primary_workloads
from .filters import BoardFilters
from .scope import FINISHED, Workloads, concurrency_q, since, slot_q

# A run whose client was saturated (any saturated sample): counted beside its figures.
SATURATED = Q(saturated_count__gt=0)
_QS = ("p25", "p50", "p75")
# The stats key of each median column, in FIGURE_FIELDS' order (ttft_p25 … e2e_p75).
MEDIAN_KEYS = tuple(f"{m}_{q}" for m in ("ttft", "decode", "e2e") for q in _QS)


def _unpack(group: dict[str, Any], *names: str) -> dict[str, Any]:
    """Replace each Quartiles value in a grouped row by name_p25, name_p50 and name_p75."""
    for name in names:
        for q, value in zip(_QS, Quartiles.split(group.pop(name)), strict=True):
            group[f"{name}_{q}"] = value
    return group


def primary(filters: BoardFilters, workloads: Workloads) -> tuple[Q, Workload | None]:
    """Which runs feed the main columns, and their workload when there is exactly one."""
    if filters.workload:
        workload = workloads.by_slug(filters.workload)
        return concurrency_q(filters.concurrency) & Q(workload=workload), workload
    if filters.concurrency is not None:
        ids = [w.id for w in workloads.base_context()]
        return concurrency_q(filters.concurrency) & Q(workload_id__in=ids), None
    workload = workloads.base()
    return (Q(workload=workload) if workload else Q(pk__in=[])), workload


def primary_match(
    filters: BoardFilters, workloads: Workloads
) -> tuple[list[int], Callable[[dict[str, Any]], bool]]:
    """primary as (workload ids, a test of a rollup row): which rows feed the main columns
    (exact_sql.primary_workloads picks them; "peak" is already in the ids)."""
    ids, concurrency = primary_workloads(filters, workloads)
    chosen = set(ids)

    def matches(row: dict[str, Any]) -> bool:
        return row["workload_id"] in chosen and (
            concurrency is None or row["concurrency"] == concurrency
        )

    return ids, matches


def rows_in(
    rows: list[dict[str, Any]], workload_ids: list[int], endpoint_ids: list[int] | None
) -> list[dict[str, Any]]:
    ids, endpoints = set(workload_ids), None if endpoint_ids is None else set(endpoint_ids)
    return [
        row
        for row in rows
        if row["workload_id"] in ids and (endpoints is None or row["endpoint_id"] in endpoints)
    ]


def in_workloads(workload_ids: list[int], endpoint_ids: list[int] | None) -> Q:
    where = Q(workload_id__in=workload_ids)
    return where if endpoint_ids is None else where & Q(endpoint_id__in=endpoint_ids)


def row_workload_ids(
    filters: BoardFilters, workload: Workload | None, workloads: Workloads
) -> list[int]:
    if workload:
        return [workload.id]
    return [
        w.id
        for w in workloads.base_context()
        if filters.concurrency != "peak" or w.concurrency == 0
    ]


def primary_stats(runs: QuerySet[Run], *, shared: Workload | None) -> Iterable[dict[str, Any]]:
    """Per endpoint: counts and medians of the main columns of `runs` (the primary runs).
    With `shared` (they are that one workload) also its median throughput and the range of
    run concurrencies."""
    extra = (
        {
            "throughput": Percentile("throughput_tps", 0.5),
            "concurrency_min": Min("concurrency"),
            "concurrency_max": Max("concurrency"),
        }
        if shared
        else {}
    )
    grouped = (
        runs.order_by()
        .values("endpoint_id")
        .annotate(
            runs=Count("*"),
            ok=Sum("ok_count"),
            errors=Sum("error_count"),
            saturated_runs=Count("saturated_count", filter=SATURATED),
            input_tokens=Percentile("input_tokens", 0.5),
            output_tokens=Percentile("output_tokens_p50", 0.5),
            ttft=Quartiles("ttft_p50_ms"),
            decode=Quartiles("decode_tps_p50"),
            e2e=Quartiles("e2e_p50_ms"),
            **extra,
        )
    )
    return (_unpack(group, "ttft", "decode", "e2e") for group in _dicts(grouped))


def concurrency_groups(runs: QuerySet[Run]) -> list[dict[str, Any]]:
    """Median decode and throughput per (endpoint, workload, concurrency)."""
    return _dicts(
        runs.order_by()
        .values("endpoint_id", "workload_id", "concurrency")
        .annotate(
            decode=Percentile("decode_tps_p50", 0.5),
            throughput=Percentile("throughput_tps", 0.5),
            runs=Count("*"),
            saturated=Count("saturated_count", filter=SATURATED),
        )
    )


def _dicts(grouped: QuerySet[Run]) -> list[dict[str, Any]]:
    """The rows of a `.values(...).annotate(...)` query as dicts. On PostgreSQL read through a
    cursor: every column here (ids, counts, sums of integers, percentile_cont's doubles and
    arrays) comes back from the driver as the ORM would give it, and its per-value converters
    (float() of a float, int() of an int: ~7,000 calls for a 7-day board of 400 endpoints)
    are skipped."""
    connection = connections[grouped.db]
    if connection.vendor != "postgresql":
        return list(grouped)
    try:
        sql, params = grouped.query.get_compiler(grouped.db).as_sql()
    except EmptyResultSet:  # a filter that can match nothing (`__in=[]`): no rows to read
        return []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [column.name for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def concurrency_stats(
    groups_of: Callable[[list[int], list[int] | None], list[dict[str, Any]]],
    workloads: Workloads,
    *,
    shared: Workload | None,
    shared_stats: dict[int, dict[str, Any]],
) -> dict[int, dict[str, Any]]:
    """Per endpoint: per-user decode at concurrency 1, 10 and peak; aggregate throughput.

    shared: a workload whose groups come from `shared_stats` (the primary query) instead: an
    endpoint whose runs of it were all at one concurrency has exactly one group, with the
    primary's decode p50 and throughput; any other is queried here.
    """
    # Workload ids, not a join: each one is a range of the run_board index.
    concurrency_of = {w.id: w.concurrency for w in workloads.base_context()}
    queried = [w for w in concurrency_of if shared is None or w != shared.id]
    groups = groups_of(queried, None)
    if shared is not None:
        mixed = []
        for endpoint_id, stats in shared_stats.items():
            if stats["concurrency_min"] != stats["concurrency_max"]:
                mixed.append(endpoint_id)
                continue
            groups.append(
                {
                    "endpoint_id": endpoint_id,
                    "workload_id": shared.id,
                    "concurrency": stats["concurrency_min"],
                    "decode": stats["decode_p50"],
                    "throughput": stats["throughput"],
                    "runs": stats["runs"],
                    "saturated": stats["saturated_runs"],
                }
            )
        if mixed:
            groups += groups_of([shared.id], mixed)
    # Later groups win ties below: fix their order (workload, then concurrency).
    groups.sort(key=lambda g: (g["endpoint_id"], g["workload_id"], g["concurrency"]))
    result: dict[int, dict[str, Any]] = {}
    for group in groups:
        slot = result.setdefault(group["endpoint_id"], {})
        column = None
        if concurrency_of[group["workload_id"]] == 0:
            column = "peak"
        elif group["concurrency"] in (1, 10):
            column = f"c{group['concurrency']}"
        if column is not None:
            # Each decode column says how many of its runs had a saturated client.
            slot[f"decode_tps_{column}"] = group["decode"]
            slot[f"runs_{column}"] = group["runs"]
            slot[f"saturated_runs_{column}"] = group["saturated"]
        # Aggregate throughput is most telling at the highest concurrency measured.
        if group["throughput"] is not None and group["concurrency"] >= slot.get("_tc", 0):
            slot["_tc"] = group["concurrency"]
            slot["throughput_tps"] = group["throughput"]
            slot["throughput_concurrency"] = group["concurrency"]
    for slot in result.values():
        slot.pop("_tc", None)
    return result


def prefill_stats(
    workloads: Workloads,
    *,
    vantage: Vantage | None,
    filters: BoardFilters,
    endpoint_ids: list[int] | None,
) -> dict[int, dict[str, Any]]:
    """Prefill cost: long-context TTFT − base TTFT of the same endpoint, vantage and slot
    (at most one run of each: run_unique_slot), as quartiles per endpoint."""
    base, long = workloads.base(), workloads.long()
    if base is None or long is None or vantage is None:
        return {}
    connection = connections[Run.objects.db]
    if connection.vendor == "postgresql":
        rows = prefill_hash_join(
            connection,
            base=base,
            long=long,
            vantage=vantage,
            filters=filters,
            endpoint_ids=endpoint_ids,
        )
    else:
        grouped = prefill_grouped(
            connection,
            base=base,
            long=long,
            vantage=vantage,
            filters=filters,
            endpoint_ids=endpoint_ids,
        )
        rows = [(endpoint_id, *Quartiles.split(value)) for endpoint_id, value in grouped]
    result = {}
    for endpoint_id, low, mid, high in rows:
        result[endpoint_id] = {
            "prefill_cost_ms": mid,
            "prefill_cost_p25_ms": low,
            "prefill_cost_p75_ms": high,
            "prefill_context_tokens": long.context_tokens,
        }
    return result


def prefill_hash_join(
    connection: Any,
    *,
    base: Workload,
    long: Workload,
    vantage: Vantage,
    filters: BoardFilters,
    endpoint_ids: list[int] | None,
) -> list[tuple[int, Any, Any, Any]]:
    """PostgreSQL: each chosen long-context run joined to the base run of its (endpoint,
    slot) by a hash join, the quartiles taken per endpoint around it: (endpoint, p25, p50,
    p75), each quartile its own column (an array column is parsed in Python: ~2 ms a board of
    400; PostgreSQL computes the aggregate written three times once).

    The board's filters choose the long-context runs (finished, the bucket if one); the base
    run of the same slot pairs with one whatever its status or bucket, as long as both have a
    TTFT. Grouping both workloads' runs by (endpoint, slot) and subtracting the two maxima
    gave the same pairs for ~1.7× the CPU. The planner under-estimates this join (it treats
    endpoint and slot as independent), so on a short window it merge-joins the two ranges on
    the slot alone, pairing every endpoint's runs of a slot with every other's (24 h at 2×:
    7 ms instead of 0.8): merge and nested-loop joins are turned off for this statement only.
    """
    start = (
        filters.since
        if filters.since is not None
        else since(filters.window_hours, now=filters.until)
    )
    both = ["vantage_id = %s", "slot >= %s"]
    params: list[Any] = [vantage.id, start]
    if filters.until is not None:
        both.append("slot < %s")
        params.append(filters.until)
    if endpoint_ids is not None:
        both.append("endpoint_id = ANY(%s::bigint[])")
        params.append(list(endpoint_ids))
    finished = sorted(FINISHED)
    chosen = [
        "l.workload_id = %s",
        f"l.status IN ({', '.join(['%s'] * len(finished))})",
        "l.ttft_p50_ms IS NOT NULL",
    ]
    chosen_params: list[Any] = [long.id, *finished]
    if filters.tod_bucket is not None:
        chosen.append("l.tod_bucket = %s")
        chosen_params.append(filters.tod_bucket)
    where = " AND ".join(
        [
            *(f"l.{c}" for c in both),
            *chosen,
            "b.workload_id = %s",
            "b.ttft_p50_ms IS NOT NULL",
            *(f"b.{c}" for c in both),
        ]
    )
    table = connection.ops.quote_name(Run._meta.db_table)
    # Built from the model's table name and constant fragments; the values stay in params.
    quartiles = (
        "(percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP "
        "(ORDER BY l.ttft_p50_ms - b.ttft_p50_ms))"
    )
    sql = (
        f"SELECT l.endpoint_id, {quartiles}[1], {quartiles}[2], {quartiles}[3] "  # noqa: S608
        f"FROM {table} AS l JOIN {table} AS b "
        "ON b.endpoint_id = l.endpoint_id AND b.slot = l.slot "
        f"WHERE {where} GROUP BY 1"
    )
    # The settings are local to a transaction (or savepoint) that is rolled back once the
    # rows are read, so they never outlive this statement, whatever the caller's transaction.
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute(_HASH_JOIN_ONLY)
        cursor.execute(sql, [*params, *chosen_params, base.id, *params])
        rows = cursor.fetchall()
        transaction.set_rollback(True, using=connection.alias)
    return rows


_HASH_JOIN_ONLY = (
    "SELECT set_config('enable_mergejoin', 'off', true), set_config('enable_nestloop', 'off', true)"
)


def prefill_grouped(
    connection: Any,
    *,
    base: Workload,
    long: Workload,
    vantage: Vantage,
    filters: BoardFilters,
    endpoint_ids: list[int] | None,
) -> list[tuple[int, Any]]:
    """Any database: both workloads' runs grouped by (endpoint, slot), the long-context TTFT
    minus the base one, and the quartiles per endpoint around that (one row per endpoint back;
    reading every pair into Python and sorting there cost ~15 ms at 30 days). SQLite's path,
    and on PostgreSQL the reference the hash join is tested against."""
    chosen = Q(workload=long, status__in=FINISHED)
    if filters.tod_bucket is not None:
        chosen &= Q(tod_bucket=filters.tod_bucket)
    runs = Run.objects.filter(
        slot_q(filters.window_hours, start=filters.since, end=filters.until),
        vantage=vantage,
        workload__in=(base, long),
    )
    if endpoint_ids is not None:
        runs = runs.filter(endpoint_id__in=endpoint_ids)
    pairs = (
        runs.order_by()
        .values("endpoint_id", "slot")
        .annotate(
            delta=Max("ttft_p50_ms", filter=chosen) - Max("ttft_p50_ms", filter=Q(workload=base))
        )
        .filter(delta__isnull=False)
        .values_list("endpoint_id", "delta")
    )
    sql, params = pairs.query.get_compiler(pairs.db).as_sql()
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        register_sqlite(connection.connection)
        quartiles_sql = f"{SQLITE_QUARTILES}(pairs.delta)"
    else:
        quartiles_sql = (
            "percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY pairs.delta)"
        )
    # Built from the ORM's own SQL and constants; the values stay in `params`.
    outer = f"SELECT pairs.endpoint_id, {quartiles_sql} FROM ({sql}) AS pairs GROUP BY 1"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(outer, params)
        return cursor.fetchall()
