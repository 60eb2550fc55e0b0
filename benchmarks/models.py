"""Workload, Schedule, Vantage, Run and Sample (docs/design.md §2)."""

from django.db import models

from providers.models import Endpoint

from .prompts import STANDARD_PROMPT
from .validators import validate_schedule_timing


class Workload(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    prompt = models.TextField(default=STANDARD_PROMPT)
    context_tokens = models.PositiveIntegerField(
        default=0,
        help_text="Neutral text pasted above the prompt (0 = base; 30000 = long).",
    )
    concurrency = models.PositiveIntegerField(
        default=1, help_text="Requests in flight at once; 0 means the endpoint's peak concurrency."
    )
    repetitions = models.PositiveIntegerField(
        default=5, help_text="Rounds; a run sends repetitions × concurrency requests."
    )
    max_output_tokens = models.PositiveIntegerField(default=2048)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["context_tokens", "concurrency", "slug"]

    def __str__(self) -> str:
        return self.name

    def concurrency_for(self, endpoint: Endpoint) -> int:
        return self.concurrency or endpoint.peak_concurrency


class Vantage(models.Model):
    """Where probes run from: a Celery queue. Numbers from different vantages never mix."""

    slug = models.SlugField(unique=True)
    label = models.CharField(max_length=100)
    queue = models.CharField(max_length=100, unique=True)
    is_default = models.BooleanField(default=False)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.label


class Schedule(models.Model):
    name = models.CharField(max_length=100)
    enabled = models.BooleanField(default=True)
    times_of_day = models.JSONField(
        default=list,
        blank=True,
        help_text='UTC times as "HH:MM", e.g. ["02:00", "10:00"].',
    )
    interval_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Instead of times of day: one slot every N minutes."
    )
    workloads = models.ManyToManyField(Workload, related_name="schedules")
    endpoints = models.ManyToManyField(
        Endpoint, blank=True, related_name="schedules", help_text="Empty = every enabled endpoint."
    )
    vantage = models.ForeignKey(Vantage, on_delete=models.PROTECT, related_name="schedules")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        validate_schedule_timing(self.times_of_day, self.interval_minutes)


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    PARTIAL = "partial"  # finished, but some samples are errors
    FAILED = "failed"
    SKIPPED = "skipped"  # a missed slot that was not replayed


# Run columns the leaderboard aggregates over a window (beyond the run_board key columns).
BOARD_COLUMNS = [
    "endpoint",
    "status",
    "tod_bucket",
    "concurrency",
    "ok_count",
    "error_count",
    "input_tokens",
    "output_tokens_p50",
    "ttft_p50_ms",
    "decode_tps_p50",
    "e2e_p50_ms",
    "throughput_tps",
]


class Run(models.Model):
    # A finished run has its summary written: statistics, alerts and boards read these.
    FINISHED = frozenset({RunStatus.DONE, RunStatus.PARTIAL, RunStatus.FAILED})
    # An ended run will do no more work: finished, or skipped (a missed slot not replayed).
    ENDED = FINISHED | {RunStatus.SKIPPED}

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="runs")
    workload = models.ForeignKey(Workload, on_delete=models.PROTECT, related_name="runs")
    vantage = models.ForeignKey(Vantage, on_delete=models.PROTECT, related_name="runs")
    schedule = models.ForeignKey(
        Schedule, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    slot = models.DateTimeField(help_text="The scheduled time: the idempotency key.")
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    failure_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last progress.")
    # Claiming: a tick (or run_now) sets these with a conditional UPDATE before enqueueing, so a
    # run is enqueued once even when two ticks race.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    enqueue_token = models.UUIDField(null=True, blank=True, editable=False)
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Executions started (a redelivery after a lost worker adds one)."
    )
    worker = models.CharField(max_length=200, blank=True, help_text="Worker that executed it.")
    # What was sent.
    concurrency = models.PositiveIntegerField(default=1)
    repetitions = models.PositiveIntegerField(default=5)
    context_tokens = models.PositiveIntegerField(default=0)
    tod_bucket = models.PositiveSmallIntegerField(default=0)
    client_version = models.CharField(max_length=40, blank=True)
    # Summary (written when the run ends): the leaderboard reads these, never the samples.
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    ok_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    ttft_p50_ms = models.FloatField(null=True, blank=True)
    ttfa_p50_ms = models.FloatField(null=True, blank=True)
    decode_tps_p50 = models.FloatField(null=True, blank=True)
    e2e_p50_ms = models.FloatField(null=True, blank=True)
    output_tokens_p50 = models.FloatField(null=True, blank=True)
    throughput_tps = models.FloatField(
        null=True, blank=True, help_text="Aggregate: output tokens of ok samples / run wall time."
    )
    summary = models.JSONField(
        default=dict, blank=True, help_text="p50/p90/p99 of every metric; errors by category."
    )

    class Meta:
        ordering = ["-slot"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "workload", "vantage", "slot"], name="run_unique_slot"
            )
        ]
        indexes = [
            models.Index(fields=["endpoint", "workload", "vantage", "-slot"], name="run_series"),
            # Covering: the leaderboard's aggregates read only these columns, so a window of
            # runs is an index-only range instead of one ~1.7 kB heap row (summary) per run.
            models.Index(
                fields=["workload", "vantage", "-slot"],
                include=BOARD_COLUMNS,
                name="run_board",
            ),
            models.Index(fields=["status", "-slot"], name="run_status"),
            # The tick's claim: queued runs nobody has enqueued yet.
            models.Index(
                fields=["slot"],
                condition=models.Q(status="queued", enqueued_at__isnull=True),
                name="run_unclaimed",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint} · {self.workload} · {self.slot:%Y-%m-%d %H:%M}"

    @property
    def expected_samples(self) -> int:
        return self.repetitions * self.concurrency


class TokensSource(models.TextChoices):
    USAGE = "usage"
    ESTIMATE = "estimate"


class Sample(models.Model):
    """One streamed request; every field of docs/design.md §4. Times: ms from t0, request sent."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="samples")
    index = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    connect_ms = models.FloatField(null=True, blank=True)
    ttfb_ms = models.FloatField(null=True, blank=True)
    first_event_ms = models.FloatField(null=True, blank=True)
    ttft_ms = models.FloatField(null=True, blank=True)
    ttfa_ms = models.FloatField(null=True, blank=True)
    last_token_ms = models.FloatField(null=True, blank=True)
    total_ms = models.FloatField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    tokens_source = models.CharField(max_length=10, choices=TokensSource.choices, blank=True)
    reasoning_tokens = models.PositiveIntegerField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    decode_tps = models.FloatField(null=True, blank=True)
    tpot_ms = models.FloatField(null=True, blank=True)
    itl_p50_ms = models.FloatField(null=True, blank=True)
    itl_p90_ms = models.FloatField(null=True, blank=True)
    itl_p99_ms = models.FloatField(null=True, blank=True)
    itl_max_ms = models.FloatField(null=True, blank=True)
    chunks = models.PositiveIntegerField(default=0)
    tokens_per_chunk = models.FloatField(null=True, blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    outcome = models.CharField(
        max_length=20,
        blank=True,
        help_text='"truncated" or "content_filtered"; blank = clean.',
    )
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error_category = models.CharField(max_length=20, blank=True)
    error_message = models.TextField(blank=True)
    retry_after_s = models.FloatField(null=True, blank=True)
    output_chars = models.PositiveIntegerField(default=0)
    output_sha256 = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="sample_unique_index")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.index}"

    @property
    def ok(self) -> bool:
        return not self.error_category

    @property
    def e2e_ms(self) -> float | None:
        return self.total_ms
