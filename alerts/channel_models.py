"""Channels: where a team already looks (Slack, Teams, Discord, PagerDuty, Opsgenie, ntfy, a
webhook, a router) as routes beside email subscriptions, sent through the same outbox.

The address (webhook URL, routing key, API key) is a secret: stored encrypted
(alerts/delivery/secrets.py) or named as an environment variable, shown back only as a hint.
"""

from django.conf import settings
from django.db import models

from .routes import Route, Topic


class Service(models.TextChoices):
    SLACK = "slack", "Slack (incoming webhook)"
    TEAMS = "teams", "Microsoft Teams (workflow webhook)"
    DISCORD = "discord", "Discord (webhook)"
    PAGERDUTY = "pagerduty", "PagerDuty (Events v2)"
    OPSGENIE = "opsgenie", "Opsgenie"
    NTFY = "ntfy", "ntfy"
    WEBHOOK = "webhook", "Webhook (signed JSON)"
    ROUTER = "router", "Router push (signed LiteLLM / OpenRouter feed)"


# Services that page: an outage or a major regression triggers, its resolution resolves.
PAGING = (Service.PAGERDUTY, Service.OPSGENIE)
# Services signed with the channel's own HMAC secret.
SIGNED = (Service.WEBHOOK, Service.ROUTER)
# The monthly report goes to the chat services and the webhook: a pager is for incidents (the
# report must not page anyone) and a router push takes its feed only.
NO_MONTHLY = (*PAGING, Service.ROUTER)


# A pager takes incidents only: the digest, the advice changed and the monthly report would
# never reach it (its sender posts alerts and test messages, nothing else).
NOT_INCIDENTS = (Topic.DIGEST, Topic.ADVICE, Topic.MONTHLY)


def refused_topics(service: str, topics: list[str]) -> str:
    """Why a channel of this service cannot receive these topics ('' when it can)."""
    name = Service(service).label.split(" (")[0] if service in Service.values else service
    if service in PAGING and (other := [t for t in NOT_INCIDENTS if t in topics]):
        labels = ", ".join(Topic(t).label.lower() for t in other)
        return f"{name} pages on incidents only; it does not take: {labels}."
    if Topic.MONTHLY in topics and service in NO_MONTHLY:
        return f"{name} does not take the monthly report (chat services and webhooks do)."
    return ""


class Channel(Route):
    """One destination and what it receives (Route: topics, endpoints, providers, severity)."""

    name = models.CharField(max_length=100)
    service = models.CharField(max_length=16, choices=Service.choices)
    secret_encrypted = models.TextField(
        blank=True, help_text="The webhook URL / routing key, encrypted; never shown back."
    )
    secret_env = models.CharField(
        "environment variable",
        max_length=100,
        blank=True,
        help_text="Or: the name of an environment variable that holds it.",
    )
    secret_hint = models.CharField(max_length=40, blank=True)
    signing_secret_encrypted = models.TextField(blank=True)
    feed = models.CharField(
        max_length=16,
        blank=True,
        choices=[("litellm", "LiteLLM router config"), ("openrouter", "OpenRouter provider order")],
        help_text="Router push: which feed to POST when a profile's advice changes.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    failures = models.PositiveIntegerField(default=0, help_text="Failed attempts in a row.")
    broken_at = models.DateTimeField(
        null=True, blank=True, help_text="Marked broken: it kept failing (shown on the page)."
    )
    last_error = models.CharField(max_length=300, blank=True)
    last_sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_service_display()})"

    @property
    def pages(self) -> bool:
        return self.service in PAGING

    @property
    def signed(self) -> bool:
        return self.service in SIGNED

    @property
    def takes_monthly(self) -> bool:
        return Topic.MONTHLY in self.topics and self.service not in NO_MONTHLY
