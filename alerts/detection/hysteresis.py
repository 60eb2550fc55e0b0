"""When verdicts become alerts: open after N positives with no clear between, resolve after N
consecutive clears.

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
    """

    positives: int = 0
    clears: int = 0
    is_open: bool = False
    muted: bool = False


def advance(
    streak: Streak,
    verdict: Verdict,
    config: DetectorConfig,
    *,
    recovered: bool = True,
    fresh: bool = True,
    new_normal: bool = False,
) -> tuple[Streak, Transition | None]:
    """The streak after one more evaluation, and the transition it causes (if any).

    An evaluation without enough data changes nothing; an in-between result (HOLD) breaks both
    streaks, so "consecutive" means consecutive evaluations that had data. A positive that the
    newest run does not back (`fresh` false, Judgement.fresh) counts as a HOLD: it re-reads
    the runs that made the last positive, it does not see the regression again. An open alert
    resolves after `resolve_after` clear evaluations in a row that are also `recovered` (the
    recent level surely back, Judgement.recovered): a lasting regression reads "clear" by
    chance, and a clear one that is not surely back does not count toward resolving. An open
    alert whose series stayed at one level long enough (`new_normal`, Judgement.new_normal)
    closes as the new normal, whatever the verdict, and the counts start again.
    """
    if verdict == Verdict.NO_DATA:
        return streak, None
    if new_normal and streak.is_open:
        return Streak(), Transition.NEW_NORMAL
    if verdict == Verdict.HOLD or (verdict == Verdict.POSITIVE and not fresh):
        # In between neither confirms nor refutes: positives so far still count toward opening
        # (a step that is positive, then just short of the bar, then positive again is the
        # same step seen twice), clears do not count toward resolving.
        return replace(streak, clears=0), None
    if verdict == Verdict.POSITIVE:
        streak = replace(streak, positives=streak.positives + 1, clears=0)
        if not streak.is_open and not streak.muted and streak.positives >= config.open_after:
            return replace(streak, is_open=True), Transition.OPEN
        return streak, None
    clears = streak.clears + 1 if recovered else 0
    streak = replace(streak, clears=clears, positives=0, muted=False)
    if streak.is_open and streak.clears >= config.resolve_after:
        return replace(streak, is_open=False), Transition.RESOLVE
    return streak, None
