"""The detector's thresholds (docs/design.md §7), read from settings: one place for defaults.

Pure data: the detector, the hysteresis and bench/detector.py all take a `DetectorConfig`, so the
bench runs exactly what production runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

DECODE = "decode_tps"
TTFT = "ttft_ms"
SPEED_METRICS = (DECODE, TTFT)


@dataclass(frozen=True, slots=True)
class MetricRule:
    """How one speed metric regresses.

    min_effect: the smallest shift worth an alert, as a fraction (0.10 = decode 10 % slower,
    0.15 = TTFT 15 % higher). floor: the smallest absolute shift, in the metric's unit
    (tok/s for decode, ms for TTFT). The floor is small (a few ms) and the relative effect does
    the scaling, so a +30 % step on a 150 ms endpoint (45 ms) counts as much as on a 3 s one.
    """

    metric: str
    higher_is_worse: bool
    min_effect: float
    floor: float
    unit: str

    @property
    def worse_sign(self) -> float:
        """+1 where higher is worse (TTFT), −1 where lower is (decode): times a log residual,
        positive means worse."""
        return 1.0 if self.higher_is_worse else -1.0

    def worse_fraction(self, log_shift: float) -> float:
        """A worse-oriented log shift as the fraction users read (+0.3 = 30 % slower / higher)."""
        if self.higher_is_worse:
            return math.expm1(log_shift)
        return -math.expm1(-log_shift)

    def change(self, baseline: float, recent: float) -> float:
        """How much worse recent is than baseline, as a fraction (negative = better)."""
        ratio = recent / baseline
        return ratio - 1 if self.higher_is_worse else 1 - ratio

    def log_shift(self, fraction: float) -> float:
        """The inverse of worse_fraction: the worse-oriented log shift of a fractional change."""
        return math.log1p(fraction) if self.higher_is_worse else -math.log1p(-fraction)


def speed_rules(
    *,
    decode_effect: float = 0.10,
    decode_floor: float = 1.0,
    ttft_effect: float = 0.15,
    ttft_floor: float = 10.0,
) -> dict[str, MetricRule]:
    """The two speed metrics' rules; defaults are docs/design.md §7's."""
    return {
        DECODE: MetricRule(
            DECODE,
            higher_is_worse=False,
            min_effect=decode_effect,
            floor=decode_floor,
            unit="tok/s",
        ),
        TTFT: MetricRule(
            TTFT, higher_is_worse=True, min_effect=ttft_effect, floor=ttft_floor, unit="ms"
        ),
    }


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    """Every threshold of the detector (docs/design.md §7; tuned with
    bench/detector.py on its tuning generators). Counts are in runs, not samples."""

    recent_hours: int = 24  # the short arm: the last day
    long_hours: int = 72  # the small-shift arm and the per-slot arms: the last three days
    # ...reaching further back to hold this many runs (a daily schedule has three in 72 h, too
    # few for a small shift ever to show)
    long_min_runs: int = 6
    trend_hours: int = 168  # the drift arm: a straight line through the last week
    baseline_days: int = 28  # ending where the long window begins
    min_recent: int = 2  # runs in the long window, one of them in the last 24 h
    min_baseline: int = 12  # runs in the baseline (4 days at 3 runs a day)
    # ...from its first run to its last at least this long: twelve runs of an hourly series
    # are half a day, which shows neither every time of day nor one day against another
    min_baseline_days: float = 3.0
    min_bucket_baseline: int = 4  # runs of a time-of-day bucket to estimate its own level
    min_week_runs: int = 6  # weekend and weekday runs each, to estimate the weekend effect
    min_slot_runs: int = 2  # runs of one bucket in the long window for a per-slot arm
    p_value: float = 0.0004  # one-sided, per arm, at `runs_per_day` evaluations a day
    # The schedule the p-value is set for; a series with more scheduled runs a day (in the long
    # window; extra runs, such as confirmation runs, not counted) multiplies its arms' p-values
    # by how many times more: more evaluations, more chances
    runs_per_day: float = 3.0
    # The state-space arm's own bar (state_space.step_arm: runs since an onset against the
    # prediction of the series' own state); 0 leaves the arm out
    step_p_value: float = 0.0004
    # Series evaluated together (a run's decode and TTFT) read their noise's correlation off
    # their own baselines shrunk toward the pool of all of them (noise.shrink); False: each
    # its own alone
    pool_noise: bool = True
    fdr_q: float = 0.05  # Benjamini–Hochberg across every arm of the series evaluated together
    effect_gate: float = 0.8  # an arm's estimate must reach this share of the minimum effect
    # The same for an arm of one time-of-day slot: three runs against one slot's level are
    # the arms most often fooled by two unlucky runs, so a slowdown confined to one time of
    # day must be half as large again as the minimum effect
    slot_effect_gate: float = 1.5
    ci_level: float = 0.90  # two-sided level of the interval shown with the shift
    major_effect: float = 0.25  # severity major above this shift
    open_after: int = 2
    # A baseline that spans under `young_days` is young: a week or two of runs cannot tell
    # how far a provider's level wanders over days (a drifting provider's correlation reads
    # as none on a third of 10-day baselines), so there an arm of the whole series must show
    # `young_effect_factor` times the effect it needs otherwise (effect_gate; a slot arm,
    # which a wander that moves every slot together fools least, keeps slot_effect_gate)
    young_days: float = 14.0
    young_effect_factor: float = 2.0
    # A positive of an arm of several runs (the 72 h, since-the-change and step-since arms)
    # that would start a streak (none counts toward opening yet:
    # SeriesInput.counted_at) is read at bars this many times looser (p_value, step_p_value
    # and fdr_q) on a baseline that is not young: it opens nothing alone, and the positive
    # that opens is read at the bars themselves, on runs since the first that are worse on
    # their own (fresh), `episode_hours` or more later
    first_p_factor: float = 4.0
    # Two positives count as two only when measured this far apart in real time: a provider
    # episode of a few hours (a 6-hour dip) is one piece of evidence, however many runs
    # measure it (hysteresis.independent)
    episode_hours: float = 6.0
    resolve_after: int = 2
    # How much likelier "back at the baseline" must be than "still worse by the alert's
    # effect", on the recent runs, for an open alert to resolve
    recovery_odds: float = 3000.0
    # ... on runs that span at least this long in real time (and are decorrelated by the
    # noise model): runs close together are one lucky episode, not a level that is back
    recovery_span_hours: float = 6.0
    # An open alert is closed as the new normal once its series has stayed at one level for
    # this long since it opened (the last `long_hours` within half the minimum effect of the
    # runs before them), or has been open twice as long while no longer worse by the minimum
    # effect; the series is then armed again against that level (docs/alerts.md)
    new_normal_hours: int = 168
    rules: dict[str, MetricRule] = field(default_factory=speed_rules)

    def enough_baseline(self, times) -> bool:
        """Whether runs at these times (Unix s, sorted) are enough to fit a baseline on."""
        if len(times) < max(self.min_baseline, 2):
            return False
        return times[-1] - times[0] >= self.min_baseline_days * 86_400
