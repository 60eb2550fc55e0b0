"""CSV responses of runs, samples and the leaderboard (rows from dashboard.csv_rows).

A stream that breaks part way (a database error, a killed worker) ends without the footer, and
the server closes the connection before the chunked body's last chunk, so neither a client nor
a person can mistake a cut file for a complete one.
"""

import csv
from collections.abc import Iterator, Sequence
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from rest_framework.renderers import BaseRenderer

from benchmarks.models import Run

from ..csv_rows import FOOTER_PREFIX, LineWriter, csv_lines, leaderboard_rows, run_rows, sample_rows


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
            writer = csv.writer(LineWriter())
            return "".join(writer.writerow(row) for row in [("field", "message"), *rows])
        return "" if data is None else str(data)


def leaderboard_csv(rows: list[dict[str, Any]]) -> StreamingHttpResponse:
    """The leaderboard's rows (BoardRow.as_dict), one line each, in the board's order."""
    # A board of a hundred rows, opened in a spreadsheet: no export footer line.
    return _response("leaderboard", *leaderboard_rows(rows), with_footer=False)
