"""WorkloadProfile: a workload a team describes once, and the advisor answers for."""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from providers.models import Endpoint

MAX_INPUT_TOKENS = 2_000_000
MAX_CALLS = 10_000


def validate_models(value: object) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValidationError('Give a list of model names, e.g. ["llama-3.3-70b", "gpt-4.1"].')


class WorkloadProfile(models.Model):
    """What one task of a workload costs in tokens and calls, and what the team will accept.

    Every figure is per call unless named per task; a task is `calls` serial calls.
    """

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    description = models.CharField(max_length=300, blank=True)
    input_tokens = models.PositiveIntegerField(
        default=1_000, validators=[MinValueValidator(1), MaxValueValidator(MAX_INPUT_TOKENS)]
    )
    cached_share = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Share of the input served from the provider's prompt cache (0–1).",
    )
    output_tokens = models.PositiveIntegerField(
        default=500, validators=[MinValueValidator(1), MaxValueValidator(1_000_000)]
    )
    reasoning_tokens = models.PositiveIntegerField(
        default=0, help_text="Hidden reasoning tokens decoded before the answer."
    )
    calls = models.PositiveIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_CALLS)],
        help_text="Serial calls per task.",
    )
    tool_s = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(86_400)],
        help_text="Seconds of the caller's own work (tools) after each call.",
    )
    concurrency = models.PositiveIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(100_000)],
        help_text="Users (requests) in flight at once on the endpoint.",
    )
    budget_s = models.FloatField(
        default=10.0,
        validators=[MinValueValidator(0.001)],
        help_text="Latency budget per task, seconds (1 s feels immediate, 10 s holds attention).",
    )
    max_cost_usd = models.DecimalField(
        "price ceiling per task (USD)",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
    )
    accepted_models = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_models],
        help_text="Model names accepted as equivalent (matched in the model id or name, "
        "ignoring case); with no endpoints either, every enabled endpoint.",
    )
    endpoints = models.ManyToManyField(Endpoint, blank=True, related_name="advisor_profiles")
    current_endpoint = models.ForeignKey(
        Endpoint,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="What the team routes to today (the page says what switching is worth).",
    )
    workload = models.ForeignKey(
        "benchmarks.Workload",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="advisor_profiles",
        limit_choices_to={"custom": True},
        help_text="A custom workload: rank endpoints by its own runs (docs/advisor.md, "
        '"A custom workload"). Blank: the standard workloads.',
    )
    preset = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.workload_id is not None and not self.workload.custom:
            raise ValidationError(
                {"workload": "Name a custom workload; blank is the standard workloads."}
            )


class RunDigest(models.Model):
    """The advisor's compact copy of one endpoint's finished runs on one UTC day, from one vantage.

    `points` packs, per run in slot order, the figures the projection reads (advisor.digest.
    FIELDS) as big-endian float64 (NaN for none), so a cold answer reads ~15 rows per endpoint
    instead of a few hundred runs with their summaries. Derived data: advisor.digest rebuilds it.
    """

    vantage = models.ForeignKey("benchmarks.Vantage", on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    runs = models.PositiveIntegerField()
    points = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["vantage", "endpoint", "day"], name="digest_unique_day")
        ]
        indexes = [models.Index(fields=["vantage", "day"], name="digest_window")]

    def __str__(self) -> str:
        return f"{self.endpoint_id} · {self.vantage_id} · {self.day}"


class DayDigest(models.Model):
    """Every endpoint's RunDigest of one UTC day from one vantage, joined in one row: what a cold
    advice reads (15 rows for its 14-day window, not one per endpoint and day: a row cost the
    database and the client more than its bytes did).

    `owners` lists, per endpoint in id order, its id (int8) and its records (int4), big-endian;
    `points` is their RunDigest.points one after the other. Derived from RunDigest rows (built on
    PostgreSQL, where the advice reads it): advisor.digest keeps it with them. An endpoint deleted
    since stays in the days joined before it went, unread: the advice asks for endpoints by id."""

    vantage = models.ForeignKey("benchmarks.Vantage", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    owners = models.BinaryField()
    points = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["vantage", "day"], name="day_digest_unique_day")
        ]

    def __str__(self) -> str:
        return f"{self.vantage_id} · {self.day}"
