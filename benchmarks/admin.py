"""Admin: workloads, schedules and vantages are edited here; runs and samples are read-only."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from .confidential import TEXT_FIELDS, can_read_prompt_text
from .costs import monthly_cost
from .models import Run, Sample, Schedule, Vantage, Workload
from .schedules import schedule_endpoints, schedule_workloads
from .validators import parse_times_of_day


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = (
        "slug",
        "name",
        "context_tokens",
        "concurrency",
        "repetitions",
        "max_output_tokens",
        "enabled",
    )
    list_filter = ("enabled",)
    prepopulated_fields = {"slug": ("name",)}

    def get_fields(self, request: HttpRequest, obj: Workload | None = None) -> list[str]:
        """A custom workload's text only for members allowed to read it (they may still
        replace it through the API)."""
        fields = list(super().get_fields(request, obj))
        if obj is not None and obj.is_custom and not can_read_prompt_text(request.user):
            fields = [name for name in fields if name not in TEXT_FIELDS]
        return fields


@admin.register(Vantage)
class VantageAdmin(admin.ModelAdmin):
    list_display = ("slug", "label", "queue", "is_default")


class TimesOfDayField(forms.CharField):
    """Times of day typed as "02:00, 10:00, 18:00" (UTC), stored as a list of "HH:MM"."""

    def prepare_value(self, value: object) -> object:
        return ", ".join(value) if isinstance(value, list) else value

    def to_python(self, value: object) -> list[str]:
        text = super().to_python(value)
        parts = [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]
        return [moment.strftime("%H:%M") for moment in parse_times_of_day(parts)]


class ScheduleForm(forms.ModelForm):
    times_of_day = TimesOfDayField(
        required=False,
        help_text='In the time zone below (UTC when blank), comma-separated, e.g. "02:00, 10:00, '
        '18:00". Leave empty for an interval.',
    )

    class Meta:
        model = Schedule
        # Schedule.clean() checks the timing: times of day or an interval.
        fields = (
            "name",
            "enabled",
            "times_of_day",
            "time_zone",
            "interval_minutes",
            "workloads",
            "endpoints",
            "vantage",
        )


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    form = ScheduleForm
    list_display = ("name", "enabled", "timing", "vantage", "cost_per_month")
    list_filter = ("enabled", "vantage")
    filter_horizontal = ("workloads", "endpoints")
    readonly_fields = ("cost_per_month",)
    actions = ("run_now",)

    @admin.display(description="when")
    def timing(self, schedule: Schedule) -> str:
        if schedule.interval_minutes:
            return f"every {schedule.interval_minutes} min"
        return f"{', '.join(schedule.times_of_day or [])} {schedule.time_zone or 'UTC'}"

    @admin.display(description="cost per month at list prices")
    def cost_per_month(self, schedule: Schedule) -> str:
        if schedule.pk is None:
            return "Save the schedule to see what it costs."
        return str(monthly_cost(schedule))

    @admin.action(description="Run now: every endpoint × workload of the schedule")
    def run_now(self, request: HttpRequest, queryset: QuerySet[Schedule]) -> None:
        from .dispatch import queue_run_now  # the broker's client only when an admin queues runs

        queued = 0
        for schedule in queryset.select_related("vantage"):
            for endpoint in schedule_endpoints(schedule):
                for workload in schedule_workloads(schedule):
                    queue_run_now(endpoint=endpoint, workload=workload, vantage=schedule.vantage)
                    queued += 1
        self.message_user(request, f"{queued} runs queued.", messages.SUCCESS)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Measurements are facts: nobody edits them by hand."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class SampleInline(admin.TabularInline):
    model = Sample
    fields = (
        "index",
        "ttft_ms",
        "decode_tps",
        "total_ms",
        "output_tokens",
        "tokens_source",
        "http_status",
        "error_category",
        "error_message",
    )
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = (
        "slot",
        "endpoint",
        "workload",
        "vantage",
        "status",
        "ttft_p50_ms",
        "decode_tps_p50",
        "throughput_tps",
        "ok_count",
        "error_count",
    )
    list_filter = ("status", "vantage", "workload", "endpoint__provider")
    list_select_related = ("endpoint__provider", "workload", "vantage")
    search_fields = ("endpoint__slug", "endpoint__model", "failure_reason")
    date_hierarchy = "slot"
    inlines = (SampleInline,)


@admin.register(Sample)
class SampleAdmin(ReadOnlyAdmin):
    list_display = (
        "run",
        "index",
        "started_at",
        "ttft_ms",
        "decode_tps",
        "output_tokens",
        "error_category",
    )
    list_filter = ("error_category", "tokens_source")
    list_select_related = ("run__endpoint__provider", "run__workload")
    search_fields = ("error_message",)
