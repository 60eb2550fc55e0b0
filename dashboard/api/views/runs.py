"""Runs (newest first, filtered), a run's samples, and triggering a run now."""

from django.db import IntegrityError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from benchmarks.models import Run, Sample
from benchmarks.selectors.scope import resolve_vantage
from benchmarks.triggers import QuotaExceeded, trigger_run

from ...filters import RunFilter
from ..errors import Conflict, QuotaRefused
from ..keyset import RunCursor
from ..pagination import Pages
from ..params import StrictQueryMixin
from ..permissions import CanTriggerRuns
from ..serializers.runs import (
    RunDetailSerializer,
    RunSerializer,
    SampleSerializer,
    TriggerRunSerializer,
)
from .base import CheckedLookupMixin


class RunViewSet(
    CheckedLookupMixin,
    StrictQueryMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Scheduled or triggered executions of a workload on an endpoint from a vantage."""

    queryset = Run.objects.select_related("endpoint__provider", "workload", "vantage").order_by(
        "-slot", "-id"
    )
    filterset_class = RunFilter
    permission_classes = [CanTriggerRuns]
    paginated_actions = ("list", "samples")
    # The list pages by keyset (deep pages stay cheap); a run's samples by page number.
    pagination_class = RunCursor

    def get_serializer_class(self):
        if self.action == "retrieve":
            return RunDetailSerializer
        if self.action == "create":
            return TriggerRunSerializer
        return RunSerializer

    @extend_schema(
        request=TriggerRunSerializer,
        responses={202: RunDetailSerializer},
        summary="Trigger a run now",
        description="Creates a queued run (slot = now) and enqueues it on the vantage's Celery "
        'queue. Operators only (staff or the "operators" group), within a per-user budget at '
        "list prices per hour and per day (429 naming the quota when it would be exceeded). "
        "Unknown fields are refused (400).",
    )
    def create(self, request: Request) -> Response:
        data = TriggerRunSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        vantage = resolve_vantage(data.validated_data.get("vantage"))  # None: the default
        if vantage is None:
            return Response(
                {"vantage": ["No vantage exists yet; create one first."]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            run = trigger_run(
                user=request.user,
                endpoint=data.validated_data["endpoint"],
                workload=data.validated_data["workload"],
                vantage=vantage,
                repetitions=data.validated_data.get("repetitions"),
            )
        except QuotaExceeded as refused:
            raise QuotaRefused(str(refused), wait=refused.retry_after_s) from None
        except IntegrityError:  # the same slot, to the microsecond: a double submit
            raise Conflict("A run of this endpoint and workload was just triggered.") from None
        run = self.get_queryset().get(pk=run.pk)
        return Response(
            RunDetailSerializer(run, context=self.get_serializer_context()).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": f"{request.path.rstrip('/')}/{run.pk}/"},
        )

    @extend_schema(
        responses={200: SampleSerializer(many=True)},
        summary="A run's samples",
        description="Every streamed request of the run, in order: the timings of docs/design.md §4 "
        "in ms from t0, token counts and their source, chunk statistics, the error category.",
        parameters=[],
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=Pages)
    def samples(self, request: Request, pk: str) -> Response:
        run = self.get_object()
        samples = Sample.objects.filter(run=run).order_by("index")
        page = self.paginate_queryset(samples)
        return self.get_paginated_response(SampleSerializer(page, many=True).data)
