"""CSV export of runs and samples: streamed row by row from a server-side cursor.

Every file ends with a footer line, `# end of export: N rows, sha256 H` (H: of every byte
before the footer). A stream that breaks part way (a database error, a killed worker) ends
without it, and the server closes the connection before the chunked body's last chunk, so
neither a client nor a person can mistake a cut file for a complete one.
"""

import csv
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from rest_framework.renderers import BaseRenderer

from benchmarks.models import Run, Sample, Vantage, Workload
from providers.models import Endpoint

from .money import MONEY_KEYS, money_text
from .serializers.runs import RUN_FIELDS, SAMPLE_FIELDS

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
    }.get(name, name)
    for name in RUN_FIELDS
}
# A sample's row starts with its run's context, so one file stands on its own.
SAMPLE_CONTEXT = ("run", "endpoint", "provider", "simulated", "workload", "vantage", "slot")
SAMPLE_MEASURED = [name for name in SAMPLE_FIELDS if name not in {"run", "ok", "e2e_ms"}]
SAMPLE_HEADER = [*SAMPLE_CONTEXT, *SAMPLE_MEASURED, "e2e_ms", "ok"]


class _Line:
    """A file-like object whose write() returns the line instead of storing it."""

    def write(self, value: str) -> str:
        return value


def _cell(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if value is None:
        return ""
    return value


def csv_lines(
    header: Sequence[str], rows: Iterable[Sequence[Any]], *, with_footer: bool = True
) -> Iterator[str]:
    """The header, one line per row, then (exports) the footer with the row count and checksum."""
    writer = csv.writer(_Line())
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


def run_rows(runs: QuerySet[Run]) -> tuple[list[str], Iterator[Sequence[Any]]]:
    """(header, rows) of runs, newest first (index run_newest)."""
    rows = (
        runs.order_by("-slot", "-id").values_list(*RUN_COLUMNS.values()).iterator(chunk_size=CHUNK)
    )
    return list(RUN_COLUMNS), rows


def sample_rows(runs: QuerySet[Run]) -> tuple[list[str], Iterator[Sequence[Any]]]:
    """(header, rows) of the runs' samples, by run then index.

    Only the run is joined; its endpoint, provider, workload and vantage come from small
    lookup tables read once (a join per sample row cost more than the rows themselves).
    """
    endpoints = {
        e["id"]: (e["slug"], e["provider__slug"], e["provider__simulated"])
        for e in Endpoint.objects.values("id", "slug", "provider__slug", "provider__simulated")
    }
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

    def rows() -> Iterator[Sequence[Any]]:
        for row in samples.iterator(chunk_size=CHUNK):
            run_id, endpoint_id, workload_id, vantage_id, slot = row[:5]
            # e2e_ms = total_ms (docs/design.md §4); ok = no error category.
            yield (
                run_id, *endpoints[endpoint_id], workloads[workload_id], vantages[vantage_id],
                slot, *row[5:], row[total], not row[category],
            )  # fmt: skip

    return SAMPLE_HEADER, rows()


def _response(
    name: str, header: list[str], rows: Iterator[Sequence[Any]], *, with_footer: bool = True
) -> StreamingHttpResponse:
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response = StreamingHttpResponse(
        csv_lines(header, rows, with_footer=with_footer), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="tokspeed-{name}-{stamp}.csv"'
    if with_footer:
        response["X-Export-Footer"] = FOOTER_PREFIX.strip()
    return response


def runs_csv(runs: QuerySet[Run]) -> StreamingHttpResponse:
    return _response("runs", *run_rows(runs))


def samples_csv(runs: QuerySet[Run]) -> StreamingHttpResponse:
    return _response("samples", *sample_rows(runs))


class CSVRenderer(BaseRenderer):
    """Errors of the CSV endpoints when the client asked for text/csv: field,message lines."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> str:
        if isinstance(data, dict):
            rows = [
                (field, message)
                for field, messages in data.items()
                for message in (messages if isinstance(messages, list) else [messages])
            ]
            writer = csv.writer(_Line())
            return "".join(writer.writerow(row) for row in [("field", "message"), *rows])
        return "" if data is None else str(data)


def leaderboard_csv(rows: list[dict[str, Any]]) -> StreamingHttpResponse:
    """The leaderboard's rows (BoardRow.as_dict), one line each, in the board's order."""
    header = [name for name in rows[0] if name != "alerts"] if rows else ["slug"]
    # A board of a hundred rows, opened in a spreadsheet: no export footer line.
    rows_out = ([money_text(row[n]) if n in MONEY_KEYS else row[n] for n in header] for row in rows)
    return _response("leaderboard", header, rows_out, with_footer=False)
