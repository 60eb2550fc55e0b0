"""Providers and endpoints (staff write; keys stay in the environment); endpoint history."""

import django_filters
from django.db.models import Count, Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from benchmarks.connection_check import check_connection
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.history import endpoint_history
from providers import archive
from providers.models import Endpoint, Provider

from ...filters import SlugChoiceFilter
from ..serializers.providers import EndpointSerializer, ProviderSerializer
from .base import ModelViewSet
from .docs import BOARD_PARAMETERS

ARCHIVED_HELP = "true: only archived (deleted) ones; false or absent: only live ones."


class ArchiveMixin:
    """DELETE archives (history kept, restorable); POST …/restore/ undoes it; POST …/purge/
    with {"confirm": "<slug>"} deletes an archived one and all its history (superusers only)."""

    live = Q(archived_at__isnull=True)

    def filter_queryset(self, queryset):
        if self.action == "list" and "archived" not in self.request.query_params:
            queryset = queryset.filter(self.live)
        return super().filter_queryset(queryset)

    def destroy(self, request: Request, slug: str) -> Response:
        item = self.get_object()
        archive.archive(item)
        return Response(
            {
                "slug": item.slug,
                "archived_at": item.archived_at,
                "detail": "Archived: hidden from boards and schedules; runs and samples kept. "
                "POST restore/ brings it back; POST purge/ deletes it and its history.",
            }
        )

    @extend_schema(request=None, responses={200: OpenApiResponse(OpenApiTypes.OBJECT)})
    @action(detail=True, methods=["post"], filterset_class=None, pagination_class=None)
    def restore(self, request: Request, slug: str) -> Response:
        item = self.get_object()
        archive.restore(item)
        return Response({"slug": item.slug, "archived_at": None, "enabled": True})

    @extend_schema(
        request={"application/json": {"type": "object", "properties": {"confirm": {}}}},
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT)},
        summary="Purge an archived item and all its history",
        description="Superusers only. Deletes runs, samples and alerts for good: the item must "
        'be archived (DELETE) first and the body must repeat its slug: {"confirm": "<slug>"}.',
    )
    @action(detail=True, methods=["post"], filterset_class=None, pagination_class=None)
    def purge(self, request: Request, slug: str) -> Response:
        if not request.user.is_superuser:
            raise PermissionDenied("Purging deletes history for good: superusers only.")
        item = self.get_object()
        confirm = request.data.get("confirm") if isinstance(request.data, dict) else None
        try:
            deleted = archive.purge(item, confirm=confirm if isinstance(confirm, str) else "")
        except archive.PurgeRefused as exc:
            raise ValidationError({"confirm": [str(exc)]}) from None
        return Response({"slug": slug, "purged": deleted}, status=status.HTTP_200_OK)


class ProviderFilter(django_filters.FilterSet):
    archived = django_filters.BooleanFilter(
        field_name="archived_at", lookup_expr="isnull", exclude=True, help_text=ARCHIVED_HELP
    )

    class Meta:
        model = Provider
        fields = ["archived"]


class ProviderViewSet(ArchiveMixin, ModelViewSet):
    """Vendors or servers speaking one wire protocol. `api_key_env` is a variable's name."""

    queryset = Provider.objects.annotate(endpoint_count=Count("endpoints")).order_by("name")
    serializer_class = ProviderSerializer
    filterset_class = ProviderFilter


class EndpointFilter(django_filters.FilterSet):
    provider = SlugChoiceFilter(queryset=Provider.objects.all(), help_text="Provider slug.")
    archived = django_filters.BooleanFilter(
        field_name="archived_at", lookup_expr="isnull", exclude=True, help_text=ARCHIVED_HELP
    )

    class Meta:
        model = Endpoint
        fields = ["provider", "archived"]


class EndpointViewSet(ArchiveMixin, ModelViewSet):
    """Models served by providers: what the leaderboard ranks."""

    queryset = Endpoint.objects.select_related("provider").order_by("provider__name", "model")
    serializer_class = EndpointSerializer
    filterset_class = EndpointFilter
    live = archive.LIVE_ENDPOINTS
    query_params_allowed_by_action = {"history": ("workload", "vantage", "window")}

    def allowed_query_params(self) -> set[str]:
        extra = self.query_params_allowed_by_action.get(self.action, ())
        return super().allowed_query_params() | set(extra)

    @extend_schema(
        parameters=[p for p in BOARD_PARAMETERS if p.name in {"workload", "vantage", "window"}],
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT)},
        summary="An endpoint's history",
        description="Per-run medians of one workload over the window (default: the base "
        "workload, the default vantage, 72 h) — over 90 days one point per UTC day instead "
        "(`points`: `day`, else `run`): the median of the day's run medians, with their "
        "p10–p90 as its band, from the day rollups —, the time-of-day profile, base vs "
        "long-context TTFT, the concurrency curve, errors by category, recent runs and the "
        "roofline. The same selector feeds the endpoint page. Times in ms, speeds in tokens/s.",
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def history(self, request: Request, slug: str) -> Response:
        endpoint = self.get_object()
        filters = BoardFilters.from_query(request.query_params)
        return Response(
            endpoint_history(
                endpoint,
                workload=filters.workload,
                vantage=filters.vantage,
                window_hours=filters.window_hours,
            )
        )

    @extend_schema(
        request=None,
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT)},
        summary="Test an endpoint's connection",
        description="One short request (the standard prompt, at most 32 output tokens) through "
        "the endpoint's real adapter, now: `ok`, a one-sentence `summary`, `ttft_ms`, "
        "`output_tokens` and `decode_tps`, or `http_status`, `error_category` (e.g. "
        "`unreachable`, `auth`, `not_found`) and the redacted `error_message`. Nothing is stored. "
        "Staff only (it spends a few tokens). A failed check is still a 200: the check ran.",
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="test",
        filterset_class=None,
        pagination_class=None,
    )
    def test_connection(self, request: Request, slug: str) -> Response:
        return Response(check_connection(self.get_object()).as_dict())
