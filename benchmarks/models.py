"""Workload, Schedule, Vantage, Run and Sample (docs/design.md §2)."""

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, MinValueValidator
from django.db import models

from providers import lanes
from providers.models import Endpoint
from providers.validators import validate_time_zone

from .prompts import MAX_SYSTEM_PROMPT_CHARS, STANDARD_PROMPT, WorkloadText
from .validators import (
    validate_prompt_suite,
    validate_reasoning_effort,
    validate_schedule_timing,
    validate_tools,
    workload_ceiling_errors,
)


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
    max_output_tokens = models.PositiveIntegerField(
        default=2048, validators=[MinValueValidator(1)], help_text="The output cap per request."
    )
    cold_connections = models.BooleanField(
        default=False,
        help_text="Open each request's connection inside its TTFT (to measure cold starts). "
        "Off: a round's connections are opened before its clocks start.",
    )
    enabled = models.BooleanField(default=True)
    # A team's own workload (docs/workloads.md). Its text is confidential: only members with
    # the view_prompt_text permission read it; everywhere else it has a name and a shape.
    system_prompt = models.TextField(
        blank=True,
        validators=[MaxLengthValidator(MAX_SYSTEM_PROMPT_CHARS)],
        help_text="Sent as the API's system prompt with every request (up to 100,000 characters).",
    )
    prompt_suite = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_prompt_suite],
        help_text="Several prompts (a list of strings): request i of a run sends prompt i mod N. "
        "Empty: the one prompt above.",
    )
    context_document = models.TextField(
        blank=True,
        help_text="A real document sent as context instead of neutral padding, cut to "
        "context_tokens by the provider's reported input tokens.",
    )
    tools = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_tools],
        help_text='Tool schemas sent with every request: [{"name", "description", "parameters"}].',
    )
    reasoning_effort = models.CharField(
        max_length=20,
        blank=True,
        validators=[validate_reasoning_effort],
        help_text="Overrides the endpoint's reasoning effort when set: none, minimal, low, medium, "
        "high, xhigh, max, adaptive, auto, or a thinking budget in tokens (docs/workloads.md).",
    )
    custom = models.BooleanField(
        default=False,
        editable=False,
        help_text="Carries a team's own text (set on save): kept off the shared leaderboard's "
        "standard columns and the advisor's defaults; it has its own board.",
    )

    class Meta:
        ordering = ["context_tokens", "concurrency", "slug"]
        permissions = [("view_prompt_text", "Can read the prompt text of custom workloads")]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.custom = self.is_custom
        update_fields = kwargs.get("update_fields")
        if update_fields is not None:
            kwargs["update_fields"] = {*update_fields, "custom"}
        super().save(*args, **kwargs)

    def clean(self) -> None:
        # Concurrency 0 (the endpoint's peak) is checked per endpoint when a run starts.
        errors = workload_ceiling_errors(
            concurrency=self.concurrency,
            repetitions=self.repetitions,
            prompt=self.largest_request_text(),
            context_tokens=self.context_tokens,
            max_output_tokens=self.max_output_tokens,
        )
        if errors:
            raise ValidationError(errors)

    @property
    def is_custom(self) -> bool:
        """A team's own text: anything but the standard prompt with neutral padding."""
        return bool(
            self.system_prompt
            or self.prompt_suite
            or self.context_document
            or self.tools
            or self.prompt != STANDARD_PROMPT
        )

    def text(self) -> WorkloadText:
        return WorkloadText.of(self)

    def largest_request_text(self) -> str:
        """The longest prompt with the system text and tool schemas: what one request holds."""
        suite = self.prompt_suite if isinstance(self.prompt_suite, list) else []
        longest = max((p for p in suite if isinstance(p, str)), key=len, default=self.prompt)
        return longest + self.system_prompt + (json.dumps(self.tools) if self.tools else "")

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


SCHEDULE_ZONE_HELP = (
    "IANA time zone (e.g. America/New_York) the times of day are in: a run at 09:00 stays at "
    "09:00 local across daylight-saving changes (a time the change skips runs an hour later, "
    "one it repeats runs once). Blank: UTC. Intervals ignore it."
)


class Schedule(models.Model):
    name = models.CharField(max_length=100)
    enabled = models.BooleanField(default=True)
    times_of_day = models.JSONField(
        default=list,
        blank=True,
        help_text='Times as "HH:MM" in the time zone below (UTC when blank), e.g. ["02:00"].',
    )
    time_zone = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_time_zone],
        help_text=SCHEDULE_ZONE_HELP,
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


class RunOrigin(models.TextChoices):
    """Why a run exists: its schedule's slot, a person's request, or a confirmation run the
    alerts asked for when a series' evidence was suggestive but short of the bar."""

    SCHEDULED = "scheduled"
    ON_DEMAND = "on_demand"
    CONFIRMATION = "confirmation"


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
    "downgraded",
    "saturated_count",  # the board counts runs whose client was saturated (docs/design.md §4)
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
    note = models.CharField(
        max_length=300,
        blank=True,
        help_text="What happened to the run besides its measurement (caught up late after its "
        "tick was missed while the database or beat was down).",
    )
    origin = models.CharField(
        max_length=12,
        choices=RunOrigin.choices,
        default=RunOrigin.SCHEDULED,
        db_default=RunOrigin.SCHEDULED,  # rows written by COPY (seed_history, benches)
        help_text="Why the run exists: its schedule, a person's request, or a confirmation "
        "run the alerts asked for (docs/alerts.md).",
    )
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
    publishes = models.PositiveSmallIntegerField(
        default=0, help_text="Times the tick tried to publish it (a lost message is re-sent)."
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
    saturated_count = models.PositiveIntegerField(
        default=0,
        db_default=0,  # rows written by COPY (seed_history, benches) name their columns
        help_text="Measured samples whose client read slower than the server wrote: their ITL "
        "tail is withheld and their decode may read low (docs/design.md §4).",
    )
    summary = models.JSONField(
        default=dict, blank=True, help_text="p50/p90/p99 of every metric; errors by category."
    )
    lane = models.CharField(max_length=20, blank=True, help_text="The lane asked for.")
    downgraded = models.BooleanField(
        default=False,
        help_text="Some requests were served in a lower lane than asked: kept out of the "
        "lane's medians (boards, rollups, alerts).",
    )

    class Meta:
        ordering = ["-slot"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "workload", "vantage", "slot"], name="run_unique_slot"
            )
        ]
        indexes = [
            # Covering: the leaderboard's aggregates read only these columns, so a window of
            # runs is an index-only range instead of one ~1.7 kB heap row (summary) per run.
            models.Index(
                fields=["workload", "vantage", "-slot"],
                include=BOARD_COLUMNS,
                name="run_board",
            ),
            # The same columns (and the id, which the concurrency curve counts) per endpoint:
            # the compare page's and an endpoint history's series, pairs and curve are
            # index-only ranges of the endpoints shown, not a heap row per run of a year.
            models.Index(
                fields=["endpoint", "workload", "vantage", "-slot"],
                include=["id", *BOARD_COLUMNS[1:]],
                name="run_endpoint_board",
            ),
            models.Index(fields=["status", "-slot"], name="run_status"),
            # The runs list and its filters: newest first by (slot, id), the keyset the API's
            # cursor names, so any page is one short index range.
            models.Index(fields=["-slot", "-id"], name="run_newest"),
            # The read side's validator: when the newest run finished (one index lookup).
            models.Index(fields=["finished_at"], name="run_finished"),
            models.Index(fields=["endpoint", "-slot", "-id"], name="run_endpoint_newest"),
            models.Index(fields=["vantage", "-slot", "-id"], name="run_vantage_newest"),
            models.Index(fields=["workload", "-slot", "-id"], name="run_workload_newest"),
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

    @property
    def served_lane(self) -> str:
        """The lane it was served in: the asked lane, or the lowest served below it."""
        below = self.summary.get("downgraded") if isinstance(self.summary, dict) else None
        return lanes.served_lane(self.lane, below)


class TokensSource(models.TextChoices):
    USAGE = "usage"
    ESTIMATE = "estimate"


class ReasoningModeChoice(models.TextChoices):
    """providers.base.ReasoningMode as database choices; blank on samples stored before it."""

    NONE = "none"
    STREAMED = "streamed"
    SUMMARIZED = "summarized"
    HIDDEN = "hidden"


class Sample(models.Model):
    """One streamed request; every field of docs/design.md §4. Times: ms from t0, request sent."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="samples")
    # The run's slot, copied: what retention ages samples by, and (PostgreSQL) the month
    # partition a sample lives in. Every sample of a run shares it, so unique (run, index, slot)
    # is unique (run, index).
    slot = models.DateTimeField()
    index = models.PositiveIntegerField()
    prompt_index = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Which prompt of the workload's suite it sent."
    )
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
    reasoning_mode = models.CharField(
        max_length=12,
        choices=ReasoningModeChoice.choices,
        blank=True,
        help_text="How reasoning arrived; with summarized or hidden, decode_tps counts answer "
        "tokens from ttfa_ms.",
    )
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    decode_tps = models.FloatField(
        null=True,
        blank=True,
        help_text="(tokens − 1) / ((last_token_ms − start) / 1000) = 1000 / tpot_ms; start = "
        "ttft_ms, or ttfa_ms with answer tokens only when reasoning_mode is summarized/hidden.",
    )
    tpot_ms = models.FloatField(null=True, blank=True)
    itl_p50_ms = models.FloatField(null=True, blank=True)
    itl_p90_ms = models.FloatField(null=True, blank=True)
    itl_p99_ms = models.FloatField(null=True, blank=True)
    itl_max_ms = models.FloatField(null=True, blank=True)
    chunks = models.PositiveIntegerField(default=0)
    coalesced_events = models.PositiveIntegerField(
        default=0, help_text="Text events that shared a network read: no gap measured for them."
    )
    saturated = models.BooleanField(
        default=False, help_text="Most text events were coalesced: the client read too slowly."
    )
    itl_withheld = models.CharField(
        max_length=4,
        blank=True,
        default="",
        db_default="",
        help_text='Which ITL figures bursts left unknown (null): "all" (the client was saturated: '
        'p50 and above) or "tail" (max, and p99 or p90 and above when they too are unknown); '
        "blank = none.",
    )
    tokens_per_chunk = models.FloatField(
        null=True, blank=True, help_text="Tokens ÷ network reads that carried text."
    )
    finish_reason = models.CharField(max_length=40, blank=True)
    outcome = models.CharField(
        max_length=20,
        blank=True,
        help_text='"truncated", "content_filtered" or "refused"; blank = clean.',
    )
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error_category = models.CharField(max_length=20, blank=True)
    error_message = models.TextField(blank=True)
    retry_after_s = models.FloatField(null=True, blank=True)
    output_chars = models.PositiveIntegerField(default=0)
    output_sha256 = models.CharField(max_length=64, blank=True)
    connect_address = models.CharField(
        max_length=64,
        blank=True,
        help_text="Address the connection went to (the proxy's, when tunnelled); of several "
        "addresses, the one that won the race.",
    )
    provider_latency_ms = models.FloatField(
        null=True,
        blank=True,
        help_text="The provider's own latency figure, beside ours (Bedrock's metrics.latencyMs).",
    )
    served_lane = models.CharField(
        max_length=20, blank=True, help_text="The lane the provider says it served; blank: unsaid."
    )

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index", "slot"], name="sample_unique_index")
        ]
        indexes = [models.Index(fields=["slot"], name="sample_slot")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.index}"

    @property
    def ok(self) -> bool:
        return not self.error_category

    @property
    def e2e_ms(self) -> float | None:
        return self.total_ms


class RunTrigger(models.Model):
    """Who asked for a run on demand, and what it may cost at list prices (the quota's ledger)."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="trigger")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="run_triggers"
    )
    cost_usd = models.DecimalField(
        max_digits=12, decimal_places=6, help_text="Upper bound at list prices, US dollars."
    )
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [models.Index(fields=["user", "-created_at"], name="trigger_user_recent")]

    def __str__(self) -> str:
        return f"{self.user} · run {self.run_id} · ${self.cost_usd}"


class Pulse(models.Model):
    """The last sign of life of one background part: beat's tick, or a worker by hostname.

    /health/ reads these; each part upserts its own row, so the table holds one row per part.
    """

    TICK = "tick"

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20)  # "tick" or "worker"
    seen_at = models.DateTimeField()
    detail = models.CharField(max_length=300, blank=True)

    def __str__(self) -> str:
        return f"{self.name} · {self.seen_at:%Y-%m-%d %H:%M:%S}"


class ExportStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Export(models.Model):
    """A background export: a compressed file of runs or samples, linked, emailed, expiring.

    A worker claims a pending row with a conditional UPDATE (status pending → running), so a
    redelivered message builds it once; `token` names the download (unguessable).
    """

    KINDS = (("runs", "runs"), ("samples", "samples"))
    FORMATS = (("csv.gz", "CSV, gzip"), ("parquet", "Parquet"))

    kind = models.CharField(max_length=10, choices=KINDS)
    file_format = models.CharField(max_length=10, choices=FORMATS, default="csv.gz")
    filters = models.JSONField(default=dict, blank=True, help_text="The runs list's filters.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="exports",
    )
    email = models.EmailField(blank=True)
    token = models.UUIDField(unique=True, editable=False)
    status = models.CharField(
        max_length=10, choices=ExportStatus.choices, default=ExportStatus.PENDING
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    rows = models.BigIntegerField(null=True, blank=True)
    size_bytes = models.BigIntegerField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, help_text="Of the file as stored.")
    file_name = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "expires_at"], name="export_status")]

    def __str__(self) -> str:
        return f"{self.kind}.{self.file_format} ({self.status})"


class RunRollup(models.Model):
    """Finished runs of one endpoint × workload × concurrency × vantage over one UTC day (or
    month: span "month", day = its first day) and time-of-day bucket: counts, error tallies and
    mergeable sketches (benchmarks.rollups.sketch) of the runs' medians. Kept forever; written
    when a run finishes, rebuilt from runs by `manage.py rebuild_rollups`."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="rollups")
    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="rollups")
    vantage = models.ForeignKey(Vantage, on_delete=models.CASCADE, related_name="rollups")
    concurrency = models.PositiveIntegerField()
    span = models.CharField(max_length=5, default="day")
    day = models.DateField()
    tod_bucket = models.PositiveSmallIntegerField()
    runs = models.PositiveIntegerField(default=0)
    ok_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    # Runs whose client was saturated (saturated_count > 0): counted, kept in the sketches, and
    # shown beside every figure they feed (docs/design.md §4, "Client saturation").
    saturated_runs = models.PositiveIntegerField(default=0, db_default=0)
    errors_by_category = models.JSONField(default=dict, blank=True)
    sketches = models.JSONField(default=dict, blank=True, help_text="metric -> sketch bins")
    # The same sketches as int32 triples (rollups.packed), written with them: a board merges
    # today's rows in numpy without parsing their JSON. None on a row no writer has packed yet
    # (migration 0023 fills them): readers then read `sketches` instead (the same bins).
    packed = models.BinaryField(null=True, blank=True, default=None)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "endpoint",
                    "workload",
                    "vantage",
                    "concurrency",
                    "span",
                    "day",
                    "tod_bucket",
                ],
                name="rollup_unique",
            )
        ]
        indexes = [
            models.Index(fields=["vantage", "span", "workload", "day"], name="rollup_board"),
            # A long window's history charts: an endpoint's day rows, index-only (selectors.days).
            models.Index(
                fields=["endpoint", "workload", "vantage", "day"],
                include=("runs", "ok_count", "error_count", "packed"),
                condition=models.Q(span="day"),
                name="rollup_day_points",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id}/{self.workload_id}/{self.span} {self.day} b{self.tod_bucket}"


class WindowRollup(models.Model):
    """One long window's rollups pre-merged per endpoint × workload × concurrency × vantage ×
    time-of-day bucket (ALL_BUCKETS: every bucket): the `days` whole UTC days ending with
    `through_day` (yesterday when fresh). A board adds today's day rollups to these, so a year
    is read from one row per key instead of hundreds. Packed sketches: rollups.packed."""

    ALL_BUCKETS = -1

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="+")
    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="+")
    vantage = models.ForeignKey(Vantage, on_delete=models.CASCADE, related_name="+")
    concurrency = models.PositiveIntegerField()
    days = models.PositiveSmallIntegerField()
    through_day = models.DateField()
    tod_bucket = models.SmallIntegerField()
    runs = models.PositiveIntegerField(default=0)
    ok_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    saturated_runs = models.PositiveIntegerField(default=0, db_default=0)  # as RunRollup's
    packed = models.BinaryField(default=b"")
    # `packed` cut down to the bins around its quartiles (rollups.packed.near): what a board
    # reads when today adds few values; None on a row written before it (read `packed`).
    near = models.BinaryField(blank=True, default=None, null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "days",
                    "through_day",
                    "vantage",
                    "tod_bucket",
                    "workload",
                    "concurrency",
                    "endpoint",
                ],
                name="window_rollup_unique",
            )  # fmt: skip
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id}/{self.workload_id} {self.days}d to {self.through_day}"


class BoardFigures(models.Model):
    """One endpoint's final long-window board figures for one UTC day, vantage, window, time-of-
    day bucket (ALL_BUCKETS: all day) and filter (selectors.materialized.covered): what a board
    read would merge from the rollups, merged once. Written with each run of the endpoint
    and for every endpoint once a day; read only while the day's BoardFiguresDay exists."""

    ALL_BUCKETS = -1

    vantage = models.ForeignKey(Vantage, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    days = models.PositiveSmallIntegerField()
    tod_bucket = models.SmallIntegerField()
    filter_key = models.CharField(max_length=80)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="+")
    # JSON text of [has main-column figures, *the row's figures, the tokens]
    # (selectors.board_figures.stored_figures), and their figures_text apart: as text, a read
    # takes both as stored (no jsonb written out again, number by number, on every read).
    figures = models.TextField(default="[]")
    text = models.TextField(default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["vantage", "day", "days", "tod_bucket", "filter_key", "endpoint"],
                name="board_figures_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id} {self.days}d {self.filter_key or 'default'} on {self.day}"


class WindowFigures(models.Model):
    """One endpoint's exact short-window board figures (72 h, 7 d) for one vantage, time-of-
    day bucket (ALL_BUCKETS: all day) and filter (selectors.materialized.covered): what the
    exact read of that endpoint gave at written_at, exact until exact_until (when the oldest
    run it counted leaves the window; None: no run in the window). selectors.window_figures
    has the rule."""

    ALL_BUCKETS = -1

    vantage = models.ForeignKey(Vantage, on_delete=models.CASCADE, related_name="+")
    hours = models.PositiveSmallIntegerField()
    tod_bucket = models.SmallIntegerField()
    filter_key = models.CharField(max_length=80)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="+")
    # The workloads the row was computed for (selectors.materialized.signature).
    signature = models.CharField(max_length=64)
    written_at = models.DateTimeField()
    exact_until = models.DateTimeField(null=True)
    # selectors.board_figures.stored_figures' list with the JSON text, as JSON text ("[]": no
    # figures): a read parses 400 of them in one call, with no jsonb to write out as text.
    figures = models.TextField(default="[]")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["vantage", "hours", "tod_bucket", "filter_key", "endpoint"],
                name="window_figures_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id} {self.hours}h {self.filter_key or 'default'}"


class BoardFiguresDay(models.Model):
    """Every endpoint's BoardFigures of one vantage were written for this UTC day: from then
    on a run's worker keeps its endpoint's rows current, so a board may read them."""

    vantage = models.ForeignKey(Vantage, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    # The workloads the rows were merged for (selectors.materialized.signature): a workload
    # added or reshaped since makes them unread until written again.
    signature = models.CharField(max_length=64, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["vantage", "day"], name="board_figures_day_unique")
        ]

    def __str__(self) -> str:
        return f"board figures of {self.vantage_id} for {self.day}"
