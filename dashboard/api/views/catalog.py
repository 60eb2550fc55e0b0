"""Workloads, schedules and vantages: readers list them, staff edit them."""

from benchmarks.models import Schedule, Vantage, Workload

from ..serializers.catalog import ScheduleSerializer, VantageSerializer, WorkloadSerializer
from .base import ID_PATTERN, ModelViewSet


class WorkloadViewSet(ModelViewSet):
    """What is sent: prompt, context padding, concurrency, repetitions, max output tokens."""

    queryset = Workload.objects.all()
    serializer_class = WorkloadSerializer


class VantageViewSet(ModelViewSet):
    """Where probes run from: a Celery queue. Numbers from different vantages never mix."""

    queryset = Vantage.objects.all()
    serializer_class = VantageSerializer


class ScheduleViewSet(ModelViewSet):
    """When runs happen: times of day (in its time zone, UTC by default) or an interval, for
    workloads × endpoints."""

    queryset = Schedule.objects.select_related("vantage").prefetch_related("workloads", "endpoints")
    serializer_class = ScheduleSerializer
    lookup_field = "pk"
    lookup_pattern = ID_PATTERN
