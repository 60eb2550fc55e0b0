"""The detector's configuration as this install's settings give it (the defaults live in rules)."""

from __future__ import annotations

from django.conf import settings

from alerts.detection.confirmation import ConfirmPolicy
from alerts.detection.rules import DetectorConfig, speed_rules


def detector_config() -> DetectorConfig:
    """The detector's thresholds from settings (ALERTS_*; docs/alerts.md says what each does)."""
    rules = speed_rules(
        decode_effect=settings.ALERTS_DECODE_MIN_EFFECT,
        decode_floor=settings.ALERTS_DECODE_FLOOR_TPS,
        ttft_effect=settings.ALERTS_TTFT_MIN_EFFECT,
        ttft_floor=settings.ALERTS_TTFT_FLOOR_MS,
    )
    return DetectorConfig(
        recent_hours=settings.ALERTS_RECENT_HOURS,
        baseline_days=settings.ALERTS_BASELINE_DAYS,
        long_hours=settings.ALERTS_LONG_HOURS,
        trend_hours=settings.ALERTS_TREND_HOURS,
        min_recent=settings.ALERTS_MIN_RECENT_RUNS,
        min_baseline=settings.ALERTS_MIN_BASELINE_RUNS,
        min_baseline_days=settings.ALERTS_MIN_BASELINE_DAYS,
        min_bucket_baseline=settings.ALERTS_MIN_BUCKET_RUNS,
        min_week_runs=settings.ALERTS_MIN_WEEK_RUNS,
        min_slot_runs=settings.ALERTS_MIN_SLOT_RUNS,
        p_value=settings.ALERTS_P_VALUE,
        step_p_value=settings.ALERTS_STEP_P_VALUE,
        first_p_factor=settings.ALERTS_FIRST_P_FACTOR,
        young_days=settings.ALERTS_YOUNG_DAYS,
        young_effect_factor=settings.ALERTS_YOUNG_EFFECT_FACTOR,
        fdr_q=settings.ALERTS_FDR_Q,
        effect_gate=settings.ALERTS_EFFECT_GATE,
        slot_effect_gate=settings.ALERTS_SLOT_EFFECT_GATE,
        ci_level=settings.ALERTS_CI_LEVEL,
        major_effect=settings.ALERTS_MAJOR_EFFECT,
        open_after=settings.ALERTS_OPEN_AFTER,
        episode_hours=settings.ALERTS_EPISODE_HOURS,
        resolve_after=settings.ALERTS_RESOLVE_AFTER,
        recovery_odds=settings.ALERTS_RECOVERY_ODDS,
        new_normal_hours=settings.ALERTS_NEW_NORMAL_HOURS,
        rules=rules,
    )


def confirm_policy() -> ConfirmPolicy:
    """When confirmation runs are asked for (ALERTS_CONFIRM_*; docs/alerts.md)."""
    return ConfirmPolicy(
        max_per_series=settings.ALERTS_CONFIRM_MAX_PER_SERIES,
        budget_share=settings.ALERTS_CONFIRM_BUDGET_SHARE,
        min_spacing_hours=settings.ALERTS_CONFIRM_MIN_SPACING_HOURS,
        suspect_q=settings.ALERTS_CONFIRM_SUSPECT_Q,
        decorrelated=settings.ALERTS_CONFIRM_DECORRELATED,
    )
