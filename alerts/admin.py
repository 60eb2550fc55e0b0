from django.contrib import admin

from alerts.models import (
    Alert,
    AlertEvent,
    ChangePoint,
    EmailOptOut,
    Notification,
    Segment,
    Subscription,
)


class AlertEventInline(admin.TabularInline):
    model = AlertEvent
    extra = 0
    fields = ["kind", "created_at", "actor", "note", "dispatched_at", "digested_at"]
    readonly_fields = fields
    can_delete = False


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "subject",
        "kind",
        "metric",
        "endpoint",
        "workload",
        "vantage",
        "status",
        "severity",
        "shift",
        "opened_at",
        "closed_at",
    ]
    list_filter = ["status", "kind", "severity", "metric", "vantage"]
    search_fields = ["endpoint__model", "endpoint__display_name", "endpoint__provider__name"]
    readonly_fields = [f.name for f in Alert._meta.fields]
    inlines = [AlertEventInline]


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["email", "user", "min_severity", "delivery", "active", "created_at"]
    list_filter = ["delivery", "min_severity", "active"]
    filter_horizontal = ["endpoints", "providers"]


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "email",
        "delivery",
        "created_at",
        "sent_at",
        "failed_at",
        "attempts",
        "subject",
    ]
    list_filter = ["delivery"]
    readonly_fields = [
        "email",
        "delivery",
        "events",
        "created_at",
        "claimed_until",
        "claim_token",
        "attempts",
        "last_error",
        "sent_at",
        "failed_at",
        "subject",
    ]


@admin.register(ChangePoint)
class ChangePointAdmin(admin.ModelAdmin):
    list_display = ["endpoint", "workload", "vantage", "metric", "at", "change"]
    list_filter = ["metric", "vantage"]


@admin.register(Segment)
class SegmentAdmin(admin.ModelAdmin):
    list_display = ["endpoint", "workload", "vantage", "metric", "starts_at", "created_by"]


admin.site.register(EmailOptOut)
