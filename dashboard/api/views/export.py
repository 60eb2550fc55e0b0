"""Exports: GET /api/v1/export/runs.csv and /samples.csv (streamed, same filters as the runs
list), background jobs for large ones (or on request), and their downloads."""

from django.conf import settings
from django.db.models import F, Sum
from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Export, ExportStatus, Run

from ...exports import jobs
from ...filters import RunFilter
from ...tasks import build_export
from ..errors import QuotaRefused
from ..export import CSVRenderer, runs_csv, samples_csv
from ..params import StrictQueryMixin
from .docs import RUN_FILTER_PARAMETERS

CSV_RESPONSE = {
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR),
    202: OpenApiResponse(OpenApiTypes.OBJECT, description="Queued as a background export."),
}
JOB_PARAMETERS = [
    OpenApiParameter(
        "background",
        str,
        enum=["1"],
        description="Build a compressed file in the background instead of streaming.",
    ),
    OpenApiParameter(
        "file_format",
        str,
        enum=["csv.gz", "parquet"],
        description="The background file's format (csv.gz by default; implies background).",
    ),
]
_FORMATS = {value for value, _ in Export.FORMATS}


def export_out(export: Export) -> dict:
    done = export.status == ExportStatus.DONE
    return {
        "id": str(export.token),
        "kind": export.kind,
        "file_format": export.file_format,
        "status": export.status,
        "filters": export.filters,
        "created_at": export.created_at.isoformat(),
        "finished_at": export.finished_at.isoformat() if export.finished_at else None,
        "expires_at": export.expires_at.isoformat() if export.expires_at else None,
        "rows": export.rows,
        "size_bytes": export.size_bytes,
        "sha256": export.sha256 or None,
        "download": jobs.download_url(export) if done else None,
        "error": export.error or None,
    }


class _Export(StrictQueryMixin, GenericAPIView):
    queryset = Run.objects.all()
    filterset_class = RunFilter
    pagination_class = None
    renderer_classes = [JSONRenderer, CSVRenderer]
    query_params_allowed = (*RunFilter.base_filters, "background", "file_format")
    kind = "runs"

    def rows_estimate(self, runs) -> int:
        if self.kind == "runs":
            return runs.count()
        total = runs.aggregate(n=Sum(F("ok_count") + F("error_count")))["n"]
        return total or 0

    def get(self, request: Request):
        runs = self.filter_queryset(self.get_queryset())
        query = request.query_params
        file_format = query.get("file_format")
        if file_format is not None and file_format not in _FORMATS:
            raise ValidationError(
                {"file_format": [f"Choose one of {', '.join(sorted(_FORMATS))}."]}
            )
        background = query.get("background") == "1" or file_format is not None
        limit = settings.TOKSPEED_EXPORT_STREAM_MAX_ROWS
        if not background and self.rows_estimate(runs) <= limit:
            return (runs_csv if self.kind == "runs" else samples_csv)(runs)
        if not request.user.is_authenticated:
            raise PermissionDenied(
                f"Exports over {limit:,} rows (and background exports) are built as a file "
                "for a signed-in user: log in, or narrow the filters (since/until)."
            )
        filters = {name: query[name] for name in RunFilter.base_filters if name in query}
        try:
            export = jobs.request_export(
                kind=self.kind,
                file_format=file_format or "csv.gz",
                filters=filters,
                user=request.user,
            )
        except jobs.QuotaExceeded as over:
            raise QuotaRefused(str(over), wait=over.retry_after_s) from None
        build_export.delay_on_commit(export.id)
        return Response(
            export_out(export),
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": f"/api/v1/exports/{export.token}/"},
        )


class RunsCsvView(_Export):
    kind = "runs"

    @extend_schema(
        parameters=RUN_FILTER_PARAMETERS + JOB_PARAMETERS,
        responses=CSV_RESPONSE,
        summary="Runs as CSV",
        description="Every run matching the filters (newest first), one line each, streamed; "
        "the last line is `# end of export: N rows, sha256 H` (a file without it was cut). "
        "Over TOKSPEED_EXPORT_STREAM_MAX_ROWS rows, or with background=1, a signed-in user "
        "gets 202 and a background export instead (linked, emailed, expiring).",
    )
    def get(self, request: Request):
        return super().get(request)


class SamplesCsvView(_Export):
    kind = "samples"

    @extend_schema(
        parameters=RUN_FILTER_PARAMETERS + JOB_PARAMETERS,
        responses=CSV_RESPONSE,
        summary="Samples as CSV",
        description="Every sample of the runs matching the filters (oldest run first, then "
        "by index), with its run's endpoint, workload, vantage and slot; streamed, ending "
        "with the footer line. Large ones become background exports, as for runs.",
    )
    def get(self, request: Request):
        return super().get(request)


def _mine(request: Request, token: str) -> Export:
    if not request.user.is_authenticated:
        raise PermissionDenied("Background exports belong to a signed-in user.")
    export = Export.objects.filter(token=token, requested_by=request.user).first()
    if export is None:
        raise Http404
    return export


class ExportListView(StrictQueryMixin, APIView):
    @extend_schema(
        operation_id="exports_list",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT)},
        summary="My exports",
    )
    def get(self, request: Request) -> Response:
        if not request.user.is_authenticated:
            raise PermissionDenied("Background exports belong to a signed-in user.")
        exports = Export.objects.filter(requested_by=request.user)[:100]
        return Response({"results": [export_out(e) for e in exports]})


class ExportDetailView(StrictQueryMixin, APIView):
    @extend_schema(responses={200: OpenApiResponse(OpenApiTypes.OBJECT)}, summary="An export")
    def get(self, request: Request, token: str) -> Response:
        return Response(export_out(_mine(request, token)))


class ExportDownloadView(StrictQueryMixin, APIView):
    @extend_schema(
        responses={(200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY)},
        summary="Download an export's file",
    )
    def get(self, request: Request, token: str):
        export = _mine(request, token)
        if export.status != ExportStatus.DONE or not export.file_name:
            raise Http404
        path = jobs.export_dir() / export.file_name
        if not path.exists():  # expired and deleted
            raise Http404
        response = FileResponse(path.open("rb"), as_attachment=True, filename=export.file_name)
        response["X-Checksum-SHA256"] = export.sha256
        return response
