"""Runs (with summaries), samples (every docs/design.md §4 field plus e2e_ms) and run triggers."""

from django.conf import settings
from rest_framework import serializers

from benchmarks.models import Run, Sample, Vantage, Workload
from providers.models import Endpoint

from ...csv_rows import RUN_FIELDS, SAMPLE_FIELDS
from .fields import SlugRef


class RunSerializer(serializers.ModelSerializer):
    endpoint = SlugRef(read_only=True)
    endpoint_label = serializers.CharField(source="endpoint.label", read_only=True)
    provider = serializers.SlugRelatedField(
        source="endpoint.provider", slug_field="slug", read_only=True
    )
    simulated = serializers.BooleanField(
        source="endpoint.provider.simulated",
        read_only=True,
        help_text="From the simulator or synthetic history, not a real provider.",
    )
    workload = SlugRef(read_only=True)
    vantage = SlugRef(read_only=True)
    served_lane = serializers.CharField(
        read_only=True,
        help_text="The lane it was served in: the lowest lane a request was served in below the "
        "one asked (then downgraded is true and summary.downgraded counts them), else the lane "
        "asked.",
    )

    class Meta:
        model = Run
        fields = RUN_FIELDS
        read_only_fields = RUN_FIELDS


class RunDetailSerializer(RunSerializer):
    """A run with its full summary (p10/p50/p90/p99 of every metric) and how it was executed."""

    class Meta(RunSerializer.Meta):
        fields = [*RUN_FIELDS, "enqueued_at", "heartbeat_at", "attempts", "worker", "summary"]
        read_only_fields = fields


class SampleSerializer(serializers.ModelSerializer):
    """Times are milliseconds from t0 (just before the request was sent); speeds tokens/s."""

    ok = serializers.BooleanField(read_only=True, help_text="False when error_category is set.")
    e2e_ms = serializers.FloatField(read_only=True, allow_null=True, help_text="= total_ms.")

    class Meta:
        model = Sample
        fields = SAMPLE_FIELDS
        read_only_fields = SAMPLE_FIELDS


class TriggerRunSerializer(serializers.Serializer):
    """POST /runs/: measure this endpoint with this workload now (from a vantage)."""

    endpoint = SlugRef(queryset=Endpoint.objects.all())
    workload = SlugRef(queryset=Workload.objects.all())
    vantage = SlugRef(
        queryset=Vantage.objects.all(),
        required=False,
        help_text="Default: the default vantage.",
    )
    repetitions = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="Rounds for this run only (default: the workload's). At most "
        "TOKSPEED_TRIGGER_MAX_REPETITIONS.",
    )

    def to_internal_value(self, data):
        # Every field sent is honoured or refused: a misspelt option must not be ignored.
        if isinstance(data, dict):
            unknown = sorted(str(name) for name in data if name not in self.fields)
            if unknown:
                known = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {name: [f"Unknown field; a trigger takes: {known}."] for name in unknown}
                )
        return super().to_internal_value(data)

    def validate_repetitions(self, value: int) -> int:
        ceiling = settings.TOKSPEED_TRIGGER_MAX_REPETITIONS
        if value > ceiling:
            raise serializers.ValidationError(f"Give at most {ceiling} repetitions.")
        return value

    def validate_endpoint(self, endpoint: Endpoint) -> Endpoint:
        if not endpoint.enabled or not endpoint.provider.enabled:
            raise serializers.ValidationError("This endpoint (or its provider) is disabled.")
        return endpoint

    def validate_workload(self, workload: Workload) -> Workload:
        if not workload.enabled:
            raise serializers.ValidationError("This workload is disabled.")
        return workload
