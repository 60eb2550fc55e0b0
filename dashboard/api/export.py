"""CSV export of runs and samples: streamed row by row, filtered like the runs list."""

import csv
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from rest_framework.renderers import BaseRenderer

from benchmarks.models import Run, Sample

from .serializers.runs import RUN_FIELDS, SAMPLE_FIELDS

CHUNK = 2_000

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
SAMPLE_COLUMNS: dict[str, str] = {
    "run": "run_id",
    "endpoint": "run__endpoint__slug",
    "provider": "run__endpoint__provider__slug",
    "simulated": "run__endpoint__provider__simulated",
    "workload": "run__workload__slug",
    "vantage": "run__vantage__slug",
    "slot": "run__slot",
    **{name: name for name in SAMPLE_FIELDS if name not in {"run", "ok", "e2e_ms"}},
}


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


def _lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(header)
    for row in rows:
        yield writer.writerow([_cell(value) for value in row])


def _sample_rows(samples: QuerySet[Sample]) -> Iterator[list[Any]]:
    paths = list(SAMPLE_COLUMNS.values())
    total = paths.index("total_ms")
    category = paths.index("error_category")
    for row in samples.values_list(*paths).iterator(chunk_size=CHUNK):
        # e2e_ms = total_ms (docs/design.md §4); ok = no error category.
        yield [*row, row[total], not row[category]]


def _response(name: str, lines: Iterator[str]) -> StreamingHttpResponse:
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="tokspeed-{name}-{stamp}.csv"'
    return response


def runs_csv(runs: QuerySet[Run]) -> StreamingHttpResponse:
    rows = (
        runs.order_by("-slot", "-id").values_list(*RUN_COLUMNS.values()).iterator(chunk_size=CHUNK)
    )
    return _response("runs", _lines(list(RUN_COLUMNS), rows))


def samples_csv(runs: QuerySet[Run]) -> StreamingHttpResponse:
    samples = Sample.objects.filter(run__in=runs.order_by().values("id")).order_by(
        "run_id", "index"
    )
    header = [*SAMPLE_COLUMNS, "e2e_ms", "ok"]
    return _response("samples", _lines(header, _sample_rows(samples)))


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
            return "".join(_lines(["field", "message"], rows))
        return "" if data is None else str(data)


def leaderboard_csv(rows: list[dict[str, Any]]) -> StreamingHttpResponse:
    """The leaderboard's rows (BoardRow.as_dict), one line each, in the board's order."""
    header = [name for name in rows[0] if name != "alerts"] if rows else ["slug"]
    return _response("leaderboard", _lines(header, ([row[n] for n in header] for row in rows)))
