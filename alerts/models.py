"""Alerts and their history (docs/design.md §2, §7).

An Alert is one regression (or outage) of one series; every transition is an AlertEvent row,
and emails are sent only from events (the outbox, see outbox.py). SeriesState keeps each
series' hysteresis between evaluations; Segment marks where an accepted new baseline starts.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from benchmarks.models import Run, Vantage, Workload
from providers.models import Endpoint

from .routes import ALERT_TOPICS, Route, Topic  # noqa: F401 (Topic, ALERT_TOPICS: re-exported)


class Metric(models.TextChoices):
    DECODE = "decode_tps", "Decode speed"
    TTFT = "ttft_ms", "Time to first token"
    AVAILABILITY = "availability", "Availability"
    PROBE = "probe", "Probe infrastructure"


class Kind(models.TextChoices):
    REGRESSION = "regression", "Speed regression"
    OUTAGE = "outage", "Outage"
    INFRASTRUCTURE = "infrastructure", "Probe infrastructure"


class Status(models.TextChoices):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    ACCEPTED = "accepted", "Accepted as new baseline"
    INVALID = "invalid", "Marked invalid"
    NEW_NORMAL = "new_normal", "Closed as the new normal"


ACTIVE = (Status.OPEN, Status.ACKNOWLEDGED)


class Severity(models.TextChoices):
    MINOR = "minor"
    MAJOR = "major"


class Alert(models.Model):
    """One regression, outage or probe-infrastructure problem; at most one active per series.

    Shifts are worse-oriented fractions: 0.3 means decode 30 % slower or TTFT 30 % higher.
    Medians are in the metric's unit (tok/s, ms); for an outage they are error shares.
    """

    kind = models.CharField(max_length=16, choices=Kind.choices)
    metric = models.CharField(max_length=16, choices=Metric.choices)
    endpoint = models.ForeignKey(
        Endpoint, on_delete=models.CASCADE, null=True, blank=True, related_name="alerts"
    )
    workload = models.ForeignKey(
        Workload, on_delete=models.CASCADE, null=True, blank=True, related_name="alerts"
    )
    vantage = models.ForeignKey(Vantage, on_delete=models.CASCADE, related_name="alerts")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    severity = models.CharField(max_length=8, choices=Severity.choices, default=Severity.MINOR)
    digest_only = models.BooleanField(
        default=False, help_text="Flapping series: its events go to the daily digest only."
    )
    baseline_median = models.FloatField(null=True, blank=True)
    recent_median = models.FloatField(null=True, blank=True)
    shift = models.FloatField(null=True, blank=True)
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    p_value = models.FloatField(null=True, blank=True)
    q_value = models.FloatField(null=True, blank=True)
    n_baseline = models.PositiveIntegerField(default=0)
    n_recent = models.PositiveIntegerField(default=0)
    error_rate = models.FloatField(null=True, blank=True, help_text="Recent error share, 0–1.")
    error_categories = models.JSONField(default=dict, blank=True)
    first_bad_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    last_run = models.ForeignKey(
        Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    client_version = models.CharField(max_length=40, blank=True)
    details = models.JSONField(
        default=dict, blank=True, help_text="Latest evaluation: bucket table, peers, windows."
    )
    frozen_baseline = models.JSONField(
        null=True,
        blank=True,
        help_text="The baseline model the alert opened against (alerts.baseline.Baseline); "
        "tested against until the series is back, so a lasting regression never resolves by "
        "being absorbed into a sliding baseline.",
    )
    opened_on = models.JSONField(
        null=True,
        blank=True,
        help_text="What the alert opened on (alerts.detection.recovery.Opened): the change it "
        "was sure of and, for a one-slot slowdown, its time-of-day bucket; it resolves only "
        "when the recent runs are surely back rather than still this much worse.",
    )

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "workload", "vantage", "metric"],
                condition=Q(status__in=ACTIVE, endpoint__isnull=False),
                name="alert_one_active_per_series",
            ),
            models.UniqueConstraint(
                fields=["vantage"],
                condition=Q(status__in=ACTIVE, kind="infrastructure"),
                name="alert_one_active_probe_alert_per_vantage",
            ),
        ]
        indexes = [models.Index(fields=["status", "-opened_at"], name="alert_status")]

    def __str__(self) -> str:
        return f"#{self.id} {self.get_kind_display()}: {self.subject}"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE

    @property
    def subject(self) -> str:
        from .wording import alert_subject

        return alert_subject(self)


class EventKind(models.TextChoices):
    OPENED = "opened"
    ESCALATED = "escalated"
    RESOLVED = "resolved"
    ACKNOWLEDGED = "acknowledged"
    ACCEPTED = "accepted", "Accepted as new baseline"
    INVALID = "invalid", "Marked invalid"
    NEW_NORMAL = "new_normal", "Closed as the new normal"


# Events people are told about by email; the others are their own actions.
NOTIFIED_KINDS = (
    EventKind.OPENED,
    EventKind.ESCALATED,
    EventKind.RESOLVED,
    EventKind.NEW_NORMAL,
)


class Evaluation(models.Model):
    """One evaluation round: the series of one finished run, tested together.

    The run is the idempotency key: a redelivered evaluate task finds this row and stops, so a
    run never advances a series' hysteresis twice.
    """

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="alert_evaluation")
    created_at = models.DateTimeField(auto_now_add=True)
    summary = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"evaluation of run {self.run_id}"


class AlertEvent(models.Model):
    """A transition of an alert; the email outbox.

    dispatched_at: set (by a conditional UPDATE) when the sender turned the event into emails
    for immediate recipients; digested_at: the same for the daily digest. Events that email
    nobody are created with both set.
    """

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=16, choices=EventKind.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.SET_NULL, null=True, blank=True, related_name="events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    note = models.TextField(blank=True)
    severity = models.CharField(max_length=8, choices=Severity.choices, default=Severity.MINOR)
    digest_only = models.BooleanField(default=False)
    snapshot = models.JSONField(default=dict, blank=True, help_text="The numbers at that moment.")
    dispatched_at = models.DateTimeField(null=True, blank=True)
    digested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=Q(dispatched_at__isnull=True),
                name="alertevent_undispatched",
            ),
            models.Index(
                fields=["created_at"],
                condition=Q(digested_at__isnull=True),
                name="alertevent_undigested",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.alert_id}"


class Delivery(models.TextChoices):
    IMMEDIATE = "immediate", "Immediately"
    DIGEST = "digest", "Daily digest"


class Notification(models.Model):
    """One message in the outbox: an email to one recipient, or a post to one channel.

    An alert email carries the events of one round (or one day's digest); a channel post carries
    one event (or the digest); an "advice changed" message carries its AdviceChange; a monthly
    report names its month (report_month) and is built when it is sent; a channel message with
    none of these is the "send test notification" button's. Created together with the
    claim of what it tells, in one transaction; then claimed for sending with a lease
    (claimed_until), so two senders never send it twice and a sender that dies mid-send leaves
    it to be retried once the lease expires.
    """

    email = models.EmailField(blank=True)
    channel = models.ForeignKey(
        "alerts.Channel",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notifications",
    )
    delivery = models.CharField(max_length=10, choices=Delivery.choices)
    events = models.ManyToManyField(AlertEvent, related_name="notifications")
    advice_change = models.ForeignKey(
        "alerts.AdviceChange",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notifications",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    claim_token = models.UUIDField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(
        null=True, blank=True, help_text="Gave up: refused for good, or too many attempts."
    )
    subject = models.CharField(max_length=300, blank=True)
    report_month = models.DateField(
        null=True,
        blank=True,
        help_text="The monthly report of the month starting this day (alerts/monthly/).",
    )

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=Q(sent_at__isnull=True, failed_at__isnull=True),
                name="notification_unsent",
            )
        ]
        constraints = [
            models.CheckConstraint(
                condition=~Q(email="") | Q(channel__isnull=False),
                name="notification_has_a_recipient",
            ),
            # The monthly report goes to an address, or a channel, once (a second pass of the
            # beat adds none).
            models.UniqueConstraint(
                fields=["email", "report_month"],
                condition=Q(report_month__isnull=False, channel__isnull=True),
                name="notification_one_monthly_report",
            ),
            models.UniqueConstraint(
                fields=["channel", "report_month"],
                condition=Q(report_month__isnull=False, channel__isnull=False),
                name="notification_one_monthly_report_per_channel",
            ),
        ]

    def __str__(self) -> str:
        where = f"channel {self.channel_id}" if self.channel_id else self.email
        return f"{self.delivery} message to {where}"


class SeriesFields(models.Model):
    """The series a row belongs to: endpoint × workload × vantage × metric (series.SeriesKey)."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="+")
    vantage = models.ForeignKey(Vantage, on_delete=models.CASCADE, related_name="+")
    metric = models.CharField(max_length=16, choices=Metric.choices)

    class Meta:
        abstract = True


class SeriesState(SeriesFields):
    """Hysteresis of one series between evaluations (see hysteresis.Streak)."""

    positives = models.PositiveSmallIntegerField(default=0)
    # The slot of the last positive that counted toward opening (hysteresis.independent)
    positive_at = models.DateTimeField(null=True, blank=True)
    clears = models.PositiveSmallIntegerField(default=0)
    muted = models.BooleanField(default=False)
    last_slot = models.DateTimeField(null=True, blank=True)
    last_verdict = models.CharField(max_length=10, blank=True)
    last_reason = models.CharField(max_length=300, blank=True)
    last_shift = models.FloatField(null=True, blank=True)
    evaluated_at = models.DateTimeField(null=True, blank=True)
    # Confirmation runs asked for since the series became suspect (0 once it is not).
    confirmations = models.PositiveSmallIntegerField(default=0)
    # What its last fitted baseline read of its noise's correlation (noise.Lags.as_dict),
    # which the provider's other series pool with their own (series.provider_noise)
    noise_lags = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "workload", "vantage", "metric"], name="seriesstate_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id}/{self.workload_id}/{self.vantage_id}/{self.metric}"


class ProbeState(models.Model):
    """Hysteresis of a vantage's "probe infrastructure" condition."""

    vantage = models.OneToOneField(Vantage, on_delete=models.CASCADE, related_name="+")
    positives = models.PositiveSmallIntegerField(default=0)
    clears = models.PositiveSmallIntegerField(default=0)
    share = models.FloatField(null=True, blank=True)
    evaluated_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"probe state of {self.vantage_id}"


class Segment(SeriesFields):
    """History of a series starts again here: baselines never reach back across it."""

    starts_at = models.DateTimeField()
    alert = models.ForeignKey(Alert, on_delete=models.SET_NULL, null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-starts_at"]
        indexes = [
            models.Index(
                fields=["endpoint", "workload", "vantage", "metric", "-starts_at"],
                name="segment_series",
            )
        ]

    def __str__(self) -> str:
        return f"segment from {self.starts_at:%Y-%m-%d %H:%M}"


class ChangePoint(SeriesFields):
    """A level shift found by the daily change-point pass; annotates charts, never emails."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="change_points")
    at = models.DateTimeField(help_text="Slot of the first run after the change.")
    before_median = models.FloatField()
    after_median = models.FloatField()
    change = models.FloatField(help_text="after / before − 1 (signed; not worse-oriented).")
    detected_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["at"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "workload", "vantage", "metric", "at"],
                name="changepoint_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.metric} {self.change:+.0%} at {self.at:%Y-%m-%d %H:%M}"


class Subscription(Route):
    """An address that wants alerts and/or "the advice changed" emails.

    user: the account that made it (None for the addresses a profile listed before the one
    subscription mechanism; those were entered by staff and count as confirmed).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="alert_subscriptions",
    )
    email = models.EmailField(help_text="Where to send; defaults to the account's address.")
    delivery = models.CharField(max_length=10, choices=Delivery.choices, default=Delivery.IMMEDIATE)
    confirmed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the address agreed (its own account's, or a link emailed to it); "
        "nothing is sent before.",
    )

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.email} ({self.get_delivery_display()})"


class EmailOptOut(models.Model):
    """An address that used an unsubscribe link: it gets no alert email until re-subscribed."""

    email = models.EmailField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.email


# "The advice changed" lives in its own module; imported here so Django finds its models.
from .advice_models import AdviceChange, AdviceState  # noqa: E402, F401
from .channel_models import Channel, Service  # noqa: E402, F401
