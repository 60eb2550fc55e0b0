"""REST API for alerts: list, retrieve, events, and the actions (acknowledge, accept, invalid).

Reads follow TOKSPEED_PUBLIC_DASHBOARD (public, or any logged-in user); actions need an
operator (staff or the "operators" group; session or token), as on the dashboard.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from alerts.lifecycle.actions import ACTIONS, ActionRefused, allowed_actions, perform
from alerts.lifecycle.transitions import NUMBERS
from alerts.models import Alert, AlertEvent
from alerts.pages import selectors
from alerts.pages.presenters import links
from dashboard.api.params import StrictQueryMixin
from dashboard.api.permissions import ReadOrOperatorActs
from dashboard.api.views.base import CheckedLookupMixin
from dashboard.roles import is_operator

FILTERS = ("view", "kind", "metric", "severity", "endpoint", "provider", "vantage")


class AlertEventSerializer(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = AlertEvent
        fields = [
            "id",
            "kind",
            "created_at",
            "severity",
            "actor",
            "note",
            "digest_only",
            "snapshot",
        ]


class AlertSerializer(serializers.ModelSerializer):
    endpoint = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    workload = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    vantage = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    subject = serializers.CharField(read_only=True)
    actions = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()

    class Meta:
        model = Alert
        fields = [
            "id",
            "kind",
            "metric",
            "endpoint",
            "workload",
            "vantage",
            "status",
            "severity",
            "subject",
            "digest_only",
            *NUMBERS,
            "first_bad_at",
            "opened_at",
            "updated_at",
            "closed_at",
            "actions",
            "links",
        ]

    def get_actions(self, alert: Alert) -> list[str]:
        """What the caller may do now: nothing unless they are an operator."""
        request = self.context.get("request")
        return allowed_actions(alert) if request and is_operator(request.user) else []

    def get_links(self, alert: Alert) -> dict[str, str]:
        return {label: url for label, url in links(alert)}


class AlertDetailSerializer(AlertSerializer):
    class Meta(AlertSerializer.Meta):
        fields = [*AlertSerializer.Meta.fields, "details"]


class ActionSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


_filter_params = [
    OpenApiParameter(
        "view",
        OpenApiTypes.STR,
        enum=list(selectors.VIEWS),
        description="Which statuses (default: active = open + acknowledged).",
    ),
    OpenApiParameter("kind", OpenApiTypes.STR),
    OpenApiParameter("metric", OpenApiTypes.STR),
    OpenApiParameter("severity", OpenApiTypes.STR),
    OpenApiParameter("endpoint", OpenApiTypes.STR, description="Endpoint slug."),
    OpenApiParameter("provider", OpenApiTypes.STR, description="Provider slug."),
    OpenApiParameter("vantage", OpenApiTypes.STR, description="Vantage slug."),
]


@extend_schema_view(list=extend_schema(parameters=_filter_params, summary="Alerts"))
class AlertViewSet(
    CheckedLookupMixin,
    StrictQueryMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Regressions, outages and probe problems, newest first."""

    permission_classes = [ReadOrOperatorActs]
    query_params_allowed = FILTERS
    paginated_actions = ("list", "events")

    def get_queryset(self):
        if self.action != "list":
            return Alert.objects.select_related("endpoint__provider", "workload", "vantage")
        params = {name: self.request.query_params.get(name, "") for name in FILTERS}
        params["view"] = params["view"] or "active"
        try:
            return selectors.alerts(**params)
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from None

    def get_serializer_class(self):
        return AlertDetailSerializer if self.action == "retrieve" else AlertSerializer

    @extend_schema(responses=AlertEventSerializer(many=True), summary="An alert's events")
    @action(detail=True, methods=["get"])
    def events(self, request: Request, pk: str | None = None) -> Response:
        alert = self.get_object()
        page = self.paginate_queryset(alert.events.select_related("actor").order_by("created_at"))
        return self.get_paginated_response(AlertEventSerializer(page, many=True).data)

    def _act(self, request: Request, name: str) -> Response:
        alert = self.get_object()
        data = ActionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            alert = perform(alert.id, name, user=request.user, note=data.validated_data["note"])
        except ActionRefused as refused:
            return Response({"detail": str(refused)}, status=status.HTTP_409_CONFLICT)
        alert = self.get_queryset().get(pk=alert.pk)
        return Response(AlertDetailSerializer(alert, context=self.get_serializer_context()).data)

    @extend_schema(
        request=ActionSerializer, responses=AlertDetailSerializer, summary=ACTIONS["acknowledge"]
    )
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str | None = None) -> Response:
        return self._act(request, "acknowledge")

    @extend_schema(
        request=ActionSerializer,
        responses=AlertDetailSerializer,
        summary=ACTIONS["accept"],
        description="The series' history starts again at the change.",
    )
    @action(detail=True, methods=["post"])
    def accept(self, request: Request, pk: str | None = None) -> Response:
        return self._act(request, "accept")

    @extend_schema(
        request=ActionSerializer, responses=AlertDetailSerializer, summary=ACTIONS["invalid"]
    )
    @action(detail=True, methods=["post"])
    def invalid(self, request: Request, pk: str | None = None) -> Response:
        return self._act(request, "invalid")
