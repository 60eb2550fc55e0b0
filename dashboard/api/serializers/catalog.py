"""Workloads, schedules and vantages: what is sent, when, and from where."""

import re
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from rest_framework import serializers

from benchmarks.confidential import TEXT_FIELDS, can_read_prompt_text, shape
from benchmarks.models import Schedule, Vantage, Workload
from benchmarks.prompts import STANDARD_PROMPT
from benchmarks.validators import parse_times_of_day, validate_schedule_timing
from providers.models import Endpoint

from .fields import SlugRef

_QUEUE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class WorkloadSerializer(serializers.ModelSerializer):
    """A custom workload's text (prompt, suite, system prompt, context document, tools) is
    written by staff and read back only by users with benchmarks.view_prompt_text; everyone
    else gets its name and `shape` (benchmarks.confidential)."""

    shape = serializers.SerializerMethodField(help_text="Sizes and counts, never text.")

    class Meta:
        model = Workload
        fields = [
            "id",
            "slug",
            "name",
            "prompt",
            "system_prompt",
            "prompt_suite",
            "context_document",
            "tools",
            "reasoning_effort",
            "context_tokens",
            "concurrency",
            "repetitions",
            "max_output_tokens",
            "cold_connections",
            "enabled",
            "shape",
        ]
        read_only_fields = ["id"]
        extra_kwargs = {
            "context_tokens": {"max_value": 2_000_000},
            "concurrency": {
                "max_value": 10_000,
                "help_text": "Requests in flight at once; 0 means the endpoint's peak.",
            },
            "repetitions": {"min_value": 1, "max_value": 1_000},
            "max_output_tokens": {"min_value": 1, "max_value": 1_000_000},
            # Blank means the standard prompt: as a form's empty field already did, so JSON too.
            "prompt": {"allow_blank": True},
        }

    def get_shape(self, workload: Workload) -> dict[str, Any]:
        return shape(workload)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """The model's own checks (suite, tools, sizes, ceilings) as 400s, never 500s."""
        if attrs.get("prompt") == "":
            attrs["prompt"] = STANDARD_PROMPT
        candidate = Workload(**{**self._current(), **attrs})
        try:
            candidate.clean_fields(exclude=["slug"])
            candidate.clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(
                exc.message_dict if hasattr(exc, "error_dict") else exc.messages
            ) from None
        return attrs

    def _current(self) -> dict[str, Any]:
        if self.instance is None:
            return {}
        return {f.name: getattr(self.instance, f.name) for f in Workload._meta.concrete_fields}

    def to_representation(self, workload: Workload) -> dict[str, Any]:
        data = super().to_representation(workload)
        request = self.context.get("request")
        if workload.is_custom and not can_read_prompt_text(getattr(request, "user", None)):
            for name in TEXT_FIELDS:
                data.pop(name, None)
        return data


class VantageSerializer(serializers.ModelSerializer):
    class Meta:
        model = Vantage
        fields = ["id", "slug", "label", "queue", "is_default"]
        read_only_fields = ["id"]

    def validate_queue(self, value: str) -> str:
        if not _QUEUE_NAME.match(value):
            raise serializers.ValidationError(
                "Give a Celery queue name: letters, digits, dots, dashes and underscores."
            )
        return value

    def save(self, **kwargs: Any) -> Vantage:
        # One default vantage: making this one the default clears the flag elsewhere.
        with transaction.atomic():
            vantage = super().save(**kwargs)
            if vantage.is_default:
                Vantage.objects.exclude(pk=vantage.pk).filter(is_default=True).update(
                    is_default=False
                )
        return vantage


class ScheduleSerializer(serializers.ModelSerializer):
    times_of_day = serializers.ListField(
        child=serializers.CharField(max_length=5),
        required=False,
        max_length=96,
        help_text='Times as "HH:MM" in `time_zone` (UTC when blank), e.g. ["02:00", "10:00"].',
    )
    workloads = SlugRef(many=True, queryset=Workload.objects.all())
    endpoints = SlugRef(
        many=True,
        required=False,
        queryset=Endpoint.objects.all(),
        help_text="Empty = every enabled endpoint.",
    )
    vantage = SlugRef(queryset=Vantage.objects.all())

    class Meta:
        model = Schedule
        fields = [
            "id",
            "name",
            "enabled",
            "times_of_day",
            "time_zone",
            "interval_minutes",
            "workloads",
            "endpoints",
            "vantage",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]
        extra_kwargs = {"interval_minutes": {"min_value": 1, "max_value": 7 * 24 * 60}}

    def validate_times_of_day(self, value: list[str]) -> list[str]:
        try:
            moments = parse_times_of_day(value)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None
        return [moment.strftime("%H:%M") for moment in moments]

    def validate_workloads(self, value: list[Workload]) -> list[Workload]:
        if not value:
            raise serializers.ValidationError("Give at least one workload.")
        return value

    def validate(self, attrs: dict) -> dict:
        current = self.instance
        times = attrs.get("times_of_day", current.times_of_day if current else [])
        interval = attrs.get("interval_minutes", current.interval_minutes if current else None)
        try:
            validate_schedule_timing(times, interval)  # the model's own rule
        except DjangoValidationError as exc:
            raise serializers.ValidationError({"times_of_day": exc.messages}) from None
        return attrs
