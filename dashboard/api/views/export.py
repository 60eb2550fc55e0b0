"""GET /api/v1/export/runs.csv and /samples.csv (same filters as the runs list)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from benchmarks.models import Run

from ..export import CSVRenderer, runs_csv, samples_csv
from ..filters import RunFilter
from ..params import StrictQueryMixin
from .docs import RUN_FILTER_PARAMETERS

CSV_RESPONSE = {(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR)}


class _Export(StrictQueryMixin, GenericAPIView):
    queryset = Run.objects.all()
    filterset_class = RunFilter
    pagination_class = None
    renderer_classes = [JSONRenderer, CSVRenderer]
    query_params_allowed = tuple(RunFilter.base_filters)

    def runs(self):
        return self.filter_queryset(self.get_queryset())


class RunsCsvView(_Export):
    @extend_schema(
        parameters=RUN_FILTER_PARAMETERS,
        responses=CSV_RESPONSE,
        summary="Runs as CSV",
        description="Every run matching the filters (newest first), one line each, streamed.",
    )
    def get(self, request: Request):
        return runs_csv(self.runs())


class SamplesCsvView(_Export):
    @extend_schema(
        parameters=RUN_FILTER_PARAMETERS,
        responses=CSV_RESPONSE,
        summary="Samples as CSV",
        description="Every sample of the runs matching the filters (oldest run first, then "
        "by index), with its run's endpoint, workload, vantage and slot; streamed.",
    )
    def get(self, request: Request):
        return samples_csv(self.runs())
