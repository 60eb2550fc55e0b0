"""REST API for channels (operators only: a channel is team configuration with a secret).

The address is write-only: answers carry its hint (`…` and 4 characters) and never the address.
A new webhook or router channel's answer carries its signing secret, once.
POST /channels/{id}/test/ sends a test notification through the outbox and says what happened.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from alerts.channel_forms import check_address
from alerts.channel_models import refused_topics
from alerts.delivery.channels import secrets
from alerts.delivery.channels.testing import send_test
from alerts.models import Channel
from alerts.routes import CHANNEL_TOPICS
from dashboard.api.params import StrictQueryMixin
from dashboard.api.views.base import CheckedLookupMixin
from dashboard.roles import is_operator
from providers.models import Endpoint, Provider

# One component for both answers of "send test" (two inline copies would clash in the schema).
TEST_RESULT = inline_serializer(
    "ChannelTestResult", {"sent": serializers.BooleanField(), "error": serializers.CharField()}
)


class OperatorsOnly(BasePermission):
    message = 'Channels need a staff user or a member of the "operators" group.'

    def has_permission(self, request, view) -> bool:
        return is_operator(request.user)


class ChannelSerializer(serializers.ModelSerializer):
    address = serializers.CharField(write_only=True, required=False, max_length=2000)
    topics = serializers.ListField(child=serializers.ChoiceField(choices=CHANNEL_TOPICS))
    providers = serializers.SlugRelatedField(
        slug_field="slug", many=True, required=False, queryset=Provider.objects.all()
    )
    endpoints = serializers.SlugRelatedField(
        slug_field="slug", many=True, required=False, queryset=Endpoint.objects.all()
    )

    class Meta:
        model = Channel
        fields = [
            "id",
            "name",
            "service",
            "address",
            "secret_env",
            "secret_hint",
            "topics",
            "providers",
            "endpoints",
            "profiles",
            "min_severity",
            "feed",
            "active",
            "failures",
            "broken_at",
            "last_error",
            "last_sent_at",
        ]
        read_only_fields = ["secret_hint", "failures", "broken_at", "last_error", "last_sent_at"]

    def validate(self, data: dict) -> dict:
        service = data.get("service") or getattr(self.instance, "service", "")
        address = data.get("address", "")
        topics = data.get("topics", getattr(self.instance, "topics", []))
        refused = refused_topics(service, topics)
        if refused:
            raise serializers.ValidationError({"topics": refused})
        stored = self.instance is not None and self.instance.secret_encrypted
        if not address and not data.get("secret_env") and not stored:
            raise serializers.ValidationError({"address": "Give the address (or secret_env)."})
        if address:
            problem = check_address(service, address)
            if problem:
                raise serializers.ValidationError({"address": problem})
        return data

    def _store(self, channel: Channel, address: str) -> str:
        if address:
            secrets.set_address(channel, address)
        elif channel.secret_env:
            channel.secret_encrypted, channel.secret_hint = "", f"${channel.secret_env}"
        made = ""
        if channel.signed and not channel.signing_secret_encrypted:
            made = secrets.new_signing_secret(channel)
        channel.save()
        return made

    def create(self, validated: dict) -> Channel:
        address = validated.pop("address", "")
        channel = super().create(validated)
        self.signing_secret = self._store(channel, address)
        return channel

    def update(self, instance: Channel, validated: dict) -> Channel:
        address = validated.pop("address", "")
        channel = super().update(instance, validated)
        self.signing_secret = self._store(channel, address)
        return channel


class ChannelViewSet(CheckedLookupMixin, StrictQueryMixin, viewsets.ModelViewSet):
    queryset = Channel.objects.prefetch_related("providers", "endpoints", "profiles")
    serializer_class = ChannelSerializer
    permission_classes = [OperatorsOnly]

    def perform_create(self, serializer) -> None:
        serializer.save(created_by=self.request.user)

    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        self.perform_create(serializer)
        body = dict(serializer.data)
        if getattr(serializer, "signing_secret", ""):
            body["signing_secret"] = serializer.signing_secret  # shown once
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses=dict.fromkeys((200, 502), TEST_RESULT),
    )
    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: str | None = None) -> Response:
        sent = send_test(self.get_object())
        return Response(
            {"sent": sent.sent_at is not None, "error": sent.last_error},
            status=status.HTTP_200_OK if sent.sent_at else status.HTTP_502_BAD_GATEWAY,
        )
