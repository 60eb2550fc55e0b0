"""The rows of every CSV tokspeed writes: runs, samples, the leaderboard and the monthly report.

One module builds them for both the API's streamed CSV (dashboard.api.export) and the background
exports (dashboard.exports), so a column means the same in each. Runs and samples stream from a
server-side cursor; every exported file ends with a footer line, `# end of export: N rows,
sha256 H` (H: of every byte before the footer). Money is written with fixed decimals
(benchmarks.money.usd_text), never in exponent notation; so are the monthly report's figures
(benchmarks.money.fixed_text).
"""

import csv
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet

from alerts.monthly.report import Figures, MonthlyReport
from benchmarks.measure.measurement import SAMPLE_FIELDS as MEASURED_FIELDS
from benchmarks.models import Run, Sample, Vantage, Workload
from benchmarks.money import Prices, fixed_text, request_cost, rounded, usd_text
from providers.lanes import served_lane
from providers.models import Endpoint

# The API's run and sample fields (dashboard.api.serializers.runs) and the exports' columns.
RUN_FIELDS = [
    "id",
    "endpoint",
    "endpoint_label",
    "provider",
    "simulated",
    "workload",
    "vantage",
    "schedule",
    "slot",
    "status",
    "failure_reason",
    "note",
    "created_at",
    "started_at",
    "finished_at",
    "concurrency",
    "repetitions",
    "context_tokens",
    "tod_bucket",
    "client_version",
    "input_tokens",
    "ok_count",
    "error_count",
    "ttft_p50_ms",
    "ttfa_p50_ms",
    "decode_tps_p50",
    "e2e_p50_ms",
    "output_tokens_p50",
    "throughput_tps",
    "saturated_count",
    # Lanes (docs/workloads.md): the lane asked, the lane served (the lowest below the asked
    # one when a request was served lower) and whether it was, as on the run's page.
    "lane",
    "served_lane",
    "downgraded",
]

# Every docs/design.md §4 field the measurement stores, with e2e_ms (= total_ms) beside total_ms.
_AFTER_TOTAL = MEASURED_FIELDS.index("total_ms") + 1
SAMPLE_FIELDS = [
    "id",
    "run",
    "index",
    "prompt_index",  # which prompt of the workload's suite the request sent
    "ok",
    *MEASURED_FIELDS[:_AFTER_TOTAL],
    "e2e_ms",
    *MEASURED_FIELDS[_AFTER_TOTAL:],
]

# Rows fetched per round trip of the server-side cursor (QuerySet.iterator on PostgreSQL).
CHUNK = 5_000
FOOTER_PREFIX = "# end of export: "

# Column -> ORM path: related objects by slug, the provider's simulated flag on every row.
RUN_COLUMNS: dict[str, str] = {
    ("endpoint_model" if name == "endpoint_label" else name): {
        "endpoint": "endpoint__slug",
        "endpoint_label": "endpoint__model",
        "provider": "endpoint__provider__slug",
        "simulated": "endpoint__provider__simulated",
        "workload": "workload__slug",
        "vantage": "vantage__slug",
        "schedule": "schedule_id",
        "served_lane": "summary__downgraded",  # {lane: requests} served below: run_rows
    }.get(name, name)
    for name in RUN_FIELDS
}
_RUN_LANE, _RUN_SERVED = (list(RUN_COLUMNS).index(name) for name in ("lane", "served_lane"))
# A sample's row starts with its run's context, so one file stands on its own.
SAMPLE_CONTEXT = ("run", "endpoint", "provider", "simulated", "workload", "vantage", "slot")
SAMPLE_MEASURED = [name for name in SAMPLE_FIELDS if name not in {"run", "ok", "e2e_ms"}]
# Exports add what a request cost at the endpoint's list prices now (benchmarks.money; blank where
# a price or a token count is unknown): a run's at its input and median output tokens, a sample's
# at its own tokens.
RUN_COST, SAMPLE_COST = "cost_per_request_usd", "cost_usd"
COST_COLUMNS = frozenset({RUN_COST, SAMPLE_COST})
SAMPLE_HEADER = [*SAMPLE_CONTEXT, *SAMPLE_MEASURED, "e2e_ms", "ok", SAMPLE_COST]


class LineWriter:
    """A file-like object whose write() returns the line instead of storing it."""

    def write(self, value: str) -> str:
        return value


def _cell(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return usd_text(value)  # fixed decimals, never "0E-6"
    return value


def csv_lines(
    header: Sequence[str], rows: Iterable[Sequence[Any]], *, with_footer: bool = True
) -> Iterator[str]:
    """The header, one line per row, then (exports) the footer with the row count and checksum."""
    writer = csv.writer(LineWriter())
    digest = hashlib.sha256()
    count = 0
    line = writer.writerow(header)
    digest.update(line.encode())
    yield line
    for row in rows:
        line = writer.writerow([_cell(value) for value in row])
        digest.update(line.encode())
        count += 1
        yield line
    if with_footer:
        yield footer(count, digest.hexdigest())


def footer(rows: int, sha256: str) -> str:
    return f"{FOOTER_PREFIX}{rows} rows, sha256 {sha256}\r\n"


def _prices() -> dict[int, Prices]:
    return {endpoint.id: Prices.of(endpoint) for endpoint in Endpoint.objects.only(
        "id", "price_input_per_mtok", "price_output_per_mtok", "price_cached_input_per_mtok"
    )}  # fmt: skip


def _cost(
    prices: Prices, input_tokens: Any, output_tokens: Any, cached_tokens: Any = 0
) -> Decimal | None:
    return rounded(
        request_cost(
            prices,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_tokens=cached_tokens or 0,
        )
    )


def run_rows(runs: QuerySet[Run]) -> tuple[list[str], Iterator[Sequence[Any]]]:
    """(header, rows) of runs, newest first (index run_newest)."""
    prices = _prices()
    values = runs.order_by("-slot", "-id").values_list(
        *RUN_COLUMNS.values(), "endpoint_id", "input_tokens", "output_tokens_p50"
    )
    asked, served = _RUN_LANE, _RUN_SERVED

    def rows() -> Iterator[Sequence[Any]]:
        for *row, endpoint_id, input_tokens, output_tokens in values.iterator(chunk_size=CHUNK):
            row[served] = served_lane(row[asked], row[served])  # as Run.served_lane
            yield (*row, _cost(prices[endpoint_id], input_tokens, output_tokens))

    return [*RUN_COLUMNS, RUN_COST], rows()


TOKEN_FIELDS = ("input_tokens", "output_tokens", "cached_tokens")


def sample_rows(runs: QuerySet[Run]) -> tuple[list[str], Iterator[Sequence[Any]]]:
    """(header, rows) of the runs' samples, by run then index.

    Only the run is joined; its endpoint, provider, workload and vantage come from small
    lookup tables read once (a join per sample row cost more than the rows themselves).
    """
    endpoints = {
        e["id"]: (e["slug"], e["provider__slug"], e["provider__simulated"])
        for e in Endpoint.objects.values("id", "slug", "provider__slug", "provider__simulated")
    }
    prices = _prices()
    workloads = dict(Workload.objects.values_list("id", "slug"))
    vantages = dict(Vantage.objects.values_list("id", "slug"))
    samples = (
        Sample.objects.filter(run__in=runs.order_by().values("id"))
        .order_by("run_id", "index")
        .values_list(
            "run_id",
            "run__endpoint_id",
            "run__workload_id",
            "run__vantage_id",
            "run__slot",
            *SAMPLE_MEASURED,
        )  # fmt: skip
    )
    total = 5 + SAMPLE_MEASURED.index("total_ms")
    category = 5 + SAMPLE_MEASURED.index("error_category")
    tokens = [5 + SAMPLE_MEASURED.index(name) for name in TOKEN_FIELDS]

    def rows() -> Iterator[Sequence[Any]]:
        for row in samples.iterator(chunk_size=CHUNK):
            run_id, endpoint_id, workload_id, vantage_id, slot = row[:5]
            # e2e_ms = total_ms (docs/design.md §4); ok = no error category.
            yield (
                run_id, *endpoints[endpoint_id], workloads[workload_id], vantages[vantage_id],
                slot, *row[5:], row[total], not row[category],
                _cost(prices[endpoint_id], *(row[i] for i in tokens)),
            )  # fmt: skip

    return SAMPLE_HEADER, rows()


# Leaderboard columns that are money (USD, or USD per 1M tokens): fixed decimals in a CSV.
MONEY_COLUMNS = frozenset(
    {"price_in_per_mtok", "price_out_per_mtok", "cost_per_request_usd", "blended_price_per_mtok"}
)


def leaderboard_rows(rows: list[dict[str, Any]]) -> tuple[list[str], Iterator[Sequence[Any]]]:
    """(header, rows) of the leaderboard's rows (BoardRow.as_dict), in the board's order."""
    header = [name for name in rows[0] if name != "alerts"] if rows else ["slug"]
    return header, (
        [usd_text(row[n]) if n in MONEY_COLUMNS else row[n] for n in header] for row in rows
    )


# The monthly report (alerts.monthly): one line per endpoint, the month and the month before.
MONTHLY_FIGURES = (
    "runs",
    "saturated_runs",
    "ttft_p25_ms",
    "ttft_p50_ms",
    "ttft_p75_ms",
    "decode_tps_p25",
    "decode_tps_p50",
    "decode_tps_p75",
    "availability",
    "cost_per_request_usd",
)
MONTHLY_HEADER = [
    "month",
    "endpoint",
    "label",
    "provider",
    "lane",
    "price_in_per_mtok",
    "price_out_per_mtok",
    "blended_price_per_mtok",
    *MONTHLY_FIGURES,
    *(f"before_{name}" for name in MONTHLY_FIGURES),
]


# The monthly figures' fixed decimals (benchmarks.money.fixed_text): ms and tok/s to the
# thousandth, availability (a share) to the millionth; money as everywhere (usd_text).
MONTHLY_PLACES = {"availability": 6}
FIGURE_PLACES = 3


def _monthly_cell(name: str, value: Any) -> Any:
    if name in MONEY_COLUMNS:
        return usd_text(value)
    if isinstance(value, float):
        return fixed_text(value, MONTHLY_PLACES.get(name, FIGURE_PLACES))
    return value


def monthly_rows(report: MonthlyReport) -> tuple[list[str], Iterator[Sequence[Any]]]:
    """(header, rows) of the monthly report's endpoint table, in the page's order."""

    def figures(values: Figures) -> list[Any]:
        return [_monthly_cell(n, getattr(values, n)) for n in MONTHLY_FIGURES]

    return MONTHLY_HEADER, (
        [
            report.month.slug,
            e.slug,
            e.label,
            e.provider,
            e.lane,
            usd_text(e.price_in_per_mtok),
            usd_text(e.price_out_per_mtok),
            usd_text(e.blended_price_per_mtok),
            *figures(e.month),
            *figures(e.before),
        ]
        for e in report.endpoints
    )
