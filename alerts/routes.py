"""Routes: what a recipient receives. Email subscriptions (models.Subscription) and channels
(channel_models.Channel) are both routes, read one way by alerts/delivery/routing.py."""

from django.core.exceptions import ValidationError
from django.db import models

from advisor.models import WorkloadProfile
from providers.models import Endpoint, Provider


class Topic(models.TextChoices):
    """What a subscription or a channel receives (the alert topics are Kind's values)."""

    REGRESSION = "regression", "Speed regressions"
    OUTAGE = "outage", "Outages"
    INFRASTRUCTURE = "infrastructure", "Probe infrastructure"
    ADVICE = "advice", "The advice changed"
    DIGEST = "digest", "Daily digest (channels)"
    MONTHLY = "monthly", "Monthly report"


ALERT_TOPICS = (Topic.REGRESSION, Topic.OUTAGE, Topic.INFRASTRUCTURE)
# Channels may choose every topic (which kinds of channel take which: channel_models.py).
CHANNEL_TOPICS = Topic.choices


def alert_topics() -> list[str]:
    return [str(t) for t in ALERT_TOPICS]


def validate_topics(value: object) -> None:
    """A list of Topic values (JSON: SQLite under `make run` stores it as PostgreSQL does)."""
    if not isinstance(value, list) or any(topic not in Topic.values for topic in value):
        known = ", ".join(Topic.values)
        raise ValidationError(f"Topics must be a list of: {known}.")


class Route(models.Model):
    """What a recipient receives: topics, for which endpoints / providers / profiles (none = all),
    at which severity. Email subscriptions and channels are both routes (alerts/delivery/routing.py
    reads them the same way)."""

    topics = models.JSONField(
        default=alert_topics,
        blank=True,
        validators=[validate_topics],
        help_text="What it receives.",
    )
    endpoints = models.ManyToManyField(Endpoint, blank=True, related_name="+")
    providers = models.ManyToManyField(Provider, blank=True, related_name="+")
    profiles = models.ManyToManyField(
        WorkloadProfile,
        blank=True,
        related_name="+",
        help_text="For the advice changed: these workload profiles (none = all).",
    )
    min_severity = models.CharField(
        "severities",
        max_length=8,
        choices=[("minor", "Minor and major"), ("major", "Major only")],
        default="minor",
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    @property
    def topic_labels(self) -> list[str]:
        return [Topic(t).label for t in self.topics if t in Topic.values]
