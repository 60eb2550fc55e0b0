"""Is it over? An open alert's series judged against what the alert opened on: surely back
to normal (an alert resolves only then), or settled at a new level for long enough to be
closed as the new normal. docs/alerts.md tells the rules.

Residuals are worse-oriented log values less the baseline's expectation, as in detector.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from alerts.detection.arms import suffix_means
from alerts.detection.baseline import Baseline
from alerts.detection.rules import DetectorConfig, MetricRule
from alerts.detection.runs import HOUR_S, Runs

# Runs whose residuals correlate by more than this (by the noise model in hours) are one piece
# of evidence that a series is back, not two (_independent_suffixes; docs/alerts.md)
RECOVERY_DECORRELATED = 0.5
# Runs closer together than this are one episode of the provider's, one run's evidence that it
# is back (_one_per_episode; as a confirmation run's least spacing, docs/alerts.md)
RECOVERY_EPISODE_H = 3.0


@dataclass(frozen=True, slots=True)
class Opened:
    """What an alert opened on: the change it was sure of (worse-oriented log shift: its
    arm's estimate less one standard error) and, when a slot arm found it, that slot's
    time-of-day bucket. "Back to normal" must be told apart from it (`recovery`), or from
    the level the series stayed at after `at` (Unix s, the newest run when it opened)."""

    effect: float
    bucket: int | None = None
    at: float | None = None

    def as_dict(self) -> dict:
        return {"effect": self.effect, "bucket": self.bucket, "at": self.at}

    @classmethod
    def from_dict(cls, data: dict) -> Opened:
        bucket, at = data.get("bucket"), data.get("at")
        return cls(
            float(data["effect"]),
            None if bucket is None else int(bucket),
            None if at is None else float(at),
        )


def recovery(
    long: Runs,
    resid: np.ndarray,
    baseline: Baseline,
    usable: np.ndarray,
    in_day: np.ndarray,
    *,
    rule: MetricRule,
    config: DetectorConfig,
    opened: Opened | None,
) -> tuple[bool, float]:
    """Whether the recent runs of the long window (`long`, their worse-oriented residuals
    `resid`; `usable`: not a spike, `in_day`: in the last day) are surely back from an open
    alert's effect, and that effect (worse-oriented log shift).

    "Back to normal" needs evidence that the level is back, not a lack of evidence that it is
    still worse: for some k ≥ 2 (up to the whole long window since the baseline), the mean m
    of the last k runs must be `recovery_odds` times likelier if the series is back at the
    baseline (0) than if it is still worse by the alert's effect s. For a normal mean with
    standard error sd that is m < s/2 − ln(odds)·sd²/s: a −40 % dip is told apart from its
    recovery in two or three runs, a −10 % step in about six. A slowdown found in one slot is
    judged on that slot's runs, a day apart. What the alert opened on is an arm's estimate
    when it was surest, often luckier than the change: when the runs since it opened, before
    the last day, say the series stayed worse by less (but by at least half the minimum
    effect), "back" is told apart from that level. An alert a pooled arm opened is not back
    while any slot's newest run since the day before it opened is still worse (by its effect,
    or by half of it and two noise scales: _still_worse): a slowdown of one slot reads "back"
    on the pooled runs, the slot's run taken for a spike.
    """
    floor = rule.log_shift(rule.min_effect)
    effect, mine = floor, np.ones(len(long), bool)
    if opened is not None:
        effect = max(opened.effect, floor)
        if opened.bucket is not None:
            mine = long.bucket == opened.bucket
        if opened.at is not None:
            stayed = mine & usable & ~in_day & (long.t >= opened.at)
            level = float(resid[stayed].mean()) if stayed.sum() >= 2 else -np.inf
            if level >= floor / 2:
                effect = max(floor, min(effect, level))
    margin = math.log(max(config.recovery_odds, 1.0)) / effect  # 1 or less: no margin
    # The last k runs of `mine` for every k ≥ 2, a spike among them left out (so the last
    # two, one of them a spike, are one run's evidence).
    chosen = mine & usable
    chosen[chosen] = _one_per_episode(long.t[chosen])
    shortest = 2 - int((mine & ~usable)[np.flatnonzero(mine)[-2:]].any())
    shifts, sds = suffix_means(long.where(chosen), resid[chosen], baseline)
    back = (shifts + margin * sds**2 < effect / 2) & _independent_suffixes(
        long.t[chosen], baseline, config
    )
    recovered = bool(np.any(back[shortest - 1 :]))
    if recovered and (opened is None or opened.bucket is None):
        # Each slot's newest run since the day the alert opened on: a slot whose slow run
        # came just before it opened has not been measured again until its next run.
        day_before = config.recent_hours * HOUR_S
        since = long.t >= (
            opened.at - day_before if opened is not None and opened.at is not None else 0.0
        )
        scales = baseline.scales(long)
        for bucket in np.unique(long.bucket[since]):
            newest = np.flatnonzero(since & (long.bucket == bucket))[-1]
            if resid[newest] >= _still_worse(effect, scales[newest]):
                return False, effect
    return recovered, effect


def _still_worse(effect: float, scale: float) -> float:
    """How much worse a slot's newest run must be for an open alert's slot not to be back:
    the alert's effect, or less where that is far beyond the run's own noise: past half the
    effect (likelier at the effect than back) and two noise scales (no normal run's chance).
    The effect a pooled arm opened on is often luckier than the slot's slowdown: a run 27 %
    slower is no slot that is back because the alert opened on 30 %."""
    return min(effect, max(effect / 2, 2 * scale))


def _one_per_episode(t: np.ndarray) -> np.ndarray:
    """Mask of the runs at times t (Unix s, sorted) that "back to normal" reads: from the
    newest back, a run only when it is RECOVERY_EPISODE_H or more before the last one kept. A
    confirmation run an hour after a scheduled one measures the same few hours of the
    provider: two lucky runs of one passing episode are one run's evidence, whatever the
    noise model says of runs an hour apart."""
    keep = np.zeros(len(t), bool)
    last = np.inf
    for i in range(len(t) - 1, -1, -1):
        if last - t[i] >= RECOVERY_EPISODE_H * HOUR_S:
            keep[i], last = True, t[i]
    return keep


def _independent_suffixes(t: np.ndarray, baseline: Baseline, config: DetectorConfig):
    """For every k (index k − 1), whether the last k runs at times t (Unix s) are evidence
    independent in real time: the oldest of them at least `recovery_span_hours` before the
    newest, and their residuals correlated by at most RECOVERY_DECORRELATED by the noise model
    in hours. Two runs an hour or two apart (a confirmation run beside a scheduled one) share
    most of a provider's passing state: one lucky episode, not a level that is back."""
    if not len(t):
        return np.zeros(0, bool)
    apart = t[-1] - t[::-1]  # index k − 1: the hours from the k-th newest run to the newest
    corr = baseline.correlations(t)[-1, ::-1]
    return (apart >= config.recovery_span_hours * HOUR_S) & (corr <= RECOVERY_DECORRELATED)


def new_normal(
    history: Runs,
    baseline: Baseline,
    *,
    now: float,
    rule: MetricRule,
    config: DetectorConfig,
    opened: Opened | None,
) -> bool:
    """Whether an open alert's series has stayed at a new level long enough to be closed as
    the new normal: `new_normal_hours` since it opened and the last `long_hours` within half
    the minimum effect of the runs since it opened before them (not still getting worse nor
    coming back), or twice that long while no longer worse by the minimum effect (a false
    alert on a drifting series that never comes surely back). An alert is never held open
    for ever against a baseline the series has left."""
    if opened is None or opened.at is None or now - opened.at < config.new_normal_hours * HOUR_S:
        return False
    sign, floor = rule.worse_sign, rule.log_shift(rule.min_effect)
    split = now - config.long_hours * HOUR_S
    before, recent = history.between(opened.at - 1.0, split), history.between(split, now)
    if len(before) < 2 or len(recent) < 2:
        return False
    level_before = float(np.mean(sign * (before.log_value - baseline.expected(before))))
    level = float(np.mean(sign * (recent.log_value - baseline.expected(recent))))
    if abs(level - level_before) < floor / 2:
        return True
    return now - opened.at >= 2 * config.new_normal_hours * HOUR_S and level < floor
