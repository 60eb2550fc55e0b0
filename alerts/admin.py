from django.contrib import admin

from alerts.channel_forms import ChannelForm
from alerts.models import (
    Alert,
    AlertEvent,
    ChangePoint,
    Channel,
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
    list_display = ["email", "user", "topics", "min_severity", "delivery", "active", "created_at"]
    list_filter = ["delivery", "min_severity", "active"]
    filter_horizontal = ["endpoints", "providers", "profiles"]


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "email",
        "channel",
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
        "channel",
        "delivery",
        "events",
        "advice_change",
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


@admin.register(Channel)
class ChannelAdmin(admin.ModelAdmin):
    """The address is write-only: only its hint is listed; the form never renders it back."""

    form = ChannelForm
    list_display = ["name", "service", "secret_hint", "active", "broken_at", "last_sent_at"]
    list_filter = ["service", "active"]
    filter_horizontal = ["endpoints", "providers", "profiles"]
    readonly_fields = ["secret_hint", "failures", "broken_at", "last_error", "last_sent_at"]

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        if form.new_signing_secret:
            self.message_user(
                request,
                "Signing secret (shown once, keep it with the receiver): "
                + form.new_signing_secret,
            )
