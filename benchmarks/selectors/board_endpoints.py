"""What a board row shows of an endpoint besides its figures: the live endpoints and their
providers read as values, each one's last run and status, and the row itself (board_row)."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import connections
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from providers.archive import LIVE_ENDPOINTS
from providers.models import Endpoint, Provider, key_configured, roofline_tps

from ..costs import input_tokens_estimate
from ..models import Run, RunStatus, Vantage, Workload
from ..money import Prices, request_cost, usd
from .board_figures import (
    ERROR_RATE_AT,
    FIGURE_SLICE,
    HAS_STATS,
    INPUT_TOKENS_AT,
    NO_FIGURES,
    OUTPUT_TOKENS_AT,
    TEXT_AT,
)
from .rows import BoardRow


@dataclass(slots=True)
class BoardEndpoint:
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


NO_RUN: tuple[Any, Any] = (None, None)


def endpoint_values(endpoint_ids: list[int] | None) -> list[tuple[Any, ...]]:
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


def board_endpoints(
    figures: dict[int, list[Any]], rows: list[tuple[Any, ...]]
) -> list[BoardEndpoint]:
    """The board's endpoints among `rows` (endpoint_values), in their order: those with data
    in the window, or enabled (with an enabled provider)."""
    found = []
    keys: dict[str, bool] = {}  # key_configured of each provider's key variable
    for values in rows:
        shown, hints = values[:9], values[9:13]
        name, simulated, provider_enabled, key_env = values[13:]
        endpoint_id, enabled = shown[0], shown[5]
        # Chosen here rather than by `id IN (every endpoint with data)` in the SQL: a board of
        # 400 endpoints would send (and parse) 400 parameters to drop the few disabled ones.
        if (enabled and provider_enabled) or figures.get(endpoint_id, NO_FIGURES)[HAS_STATS]:
            found.append(
                BoardEndpoint(
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


def last_runs(
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


def _status(endpoint: BoardEndpoint, last_status: str | None, error_rate: float | None) -> str:
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


def board_row(
    endpoint: BoardEndpoint,
    figures: list[Any],
    workload: Workload | None,
    last_run: tuple[Any, Any],
) -> BoardRow:
    """`figures` as stored_figures gives them, in place as BoardRow's positional arguments."""
    last_slot, last_status = last_run
    price_in, price_out = endpoint.price_input_per_mtok, endpoint.price_output_per_mtok
    input_tokens, output_tokens = figures[INPUT_TOKENS_AT], figures[OUTPUT_TOKENS_AT]
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
        _status(endpoint, last_status, figures[ERROR_RATE_AT]),
        endpoint.lane,
        *figures[FIGURE_SLICE],
        float(price_in) if price_in is not None else None,
        float(price_out) if price_out is not None else None,
        input_tokens,
        estimated,
        output_tokens,
        usd(cost),
        endpoint.roofline_tps,
        last_slot,
        last_status,
        figures_json=figures[TEXT_AT] if len(figures) > TEXT_AT else "",
    )
