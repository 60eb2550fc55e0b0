"""When verdicts become alerts: open after N independent positives with no clear between,
resolve after N consecutive clears.

Pure state machine shared by evaluate.py (state kept in SeriesState rows) and bench/detector.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from alerts.detection.detector import Verdict
from alerts.detection.rules import DetectorConfig


class Transition(StrEnum):
    OPEN = "open"
    RESOLVE = "resolve"
    NEW_NORMAL = "new_normal"  # closed: the series stayed at a new level; armed against it


@dataclass(frozen=True, slots=True)
class Streak:
    """Consecutive positive / clear evaluations of one series, and whether its alert is open.

    muted: the last alert was marked invalid; no new alert opens until the series has been
    clear once (otherwise the very shift someone just dismissed would reopen it).
    positive_at: when the last positive that counted was measured (Unix s; None: not known).
    """

    positives: int = 0
    clears: int = 0
    is_open: bool = False
    muted: bool = False
    positive_at: float | None = None


SLACK_S = 60.0  # run slots are whole seconds: a positive a minute short of the episode still counts


def independent(streak: Streak, at: float | None, config: DetectorConfig) -> bool:
    """Whether a positive measured at `at` (Unix s) is evidence of its own beside the streak's
    last counted one: at least `episode_hours` later in real time (a provider episode of a few
    hours, a 6-hour dip, is one piece of evidence however many runs measure it). The first
    positive of a streak always is; so is one whose time is not known."""
    if at is None or streak.positives == 0 or streak.positive_at is None:
        return True
    return at - streak.positive_at >= config.episode_hours * 3600.0 - SLACK_S


def counts_from(streak: Streak, config: DetectorConfig) -> float | None:
    """The earliest time (Unix s) a positive would count toward opening (None: any time)."""
    if streak.positives == 0 or streak.positive_at is None:
        return None
    return streak.positive_at + config.episode_hours * 3600.0 - SLACK_S


def counted_at(streak: Streak) -> float | None:
    """When the streak's last counted positive was measured, while one counts toward opening
    (SeriesInput.counted_at: a positive's freshness reads the runs since it)."""
    return streak.positive_at if streak.positives and not streak.is_open else None


def advance(
    streak: Streak,
    verdict: Verdict,
    config: DetectorConfig,
    *,
    recovered: bool = True,
    fresh: bool = True,
    new_normal: bool = False,
    at: float | None = None,
) -> tuple[Streak, Transition | None]:
    """The streak after one more evaluation, and the transition it causes (if any).

    An evaluation without enough data changes nothing; an in-between result (HOLD) breaks both
    streaks, so "consecutive" means consecutive evaluations that had data. A positive that the
    newest run does not back (`fresh` false, Judgement.fresh) counts as a HOLD: it re-reads
    the runs that made the last positive, it does not see the regression again. So does a
    positive measured (`at`, Unix s) within `episode_hours` of the last one that counted
    (`independent`): a confirmation run inside the same provider episode re-measures it. An
    open alert resolves after `resolve_after` clear evaluations in a row that are also
    `recovered` (the recent level surely back, Judgement.recovered): a lasting regression reads
    "clear" by chance, and a clear one that is not surely back does not count toward
    resolving. An open alert whose series stayed at one level long enough (`new_normal`,
    Judgement.new_normal) closes as the new normal, whatever the verdict, and the counts start
    again.
    """
    if verdict == Verdict.NO_DATA:
        return streak, None
    if new_normal and streak.is_open:
        return Streak(), Transition.NEW_NORMAL
    new = fresh and independent(streak, at, config)
    if verdict == Verdict.HOLD or (verdict == Verdict.POSITIVE and not new):
        # In between neither confirms nor refutes: positives so far still count toward opening
        # (a step that is positive, then just short of the bar, then positive again is the
        # same step seen twice), clears do not count toward resolving.
        return replace(streak, clears=0), None
    if verdict == Verdict.POSITIVE:
        streak = replace(streak, positives=streak.positives + 1, clears=0, positive_at=at)
        if not streak.is_open and not streak.muted and streak.positives >= config.open_after:
            return replace(streak, is_open=True), Transition.OPEN
        return streak, None
    clears = streak.clears + 1 if recovered else 0
    streak = replace(streak, clears=clears, positives=0, muted=False, positive_at=None)
    if streak.is_open and streak.clears >= config.resolve_after:
        return replace(streak, is_open=False), Transition.RESOLVE
    return streak, None
