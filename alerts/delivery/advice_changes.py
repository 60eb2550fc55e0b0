""" "The advice changed": evaluate every profile's recommendation, record a change once it has
held for two evaluations in a row (hysteresis, like regressions). Telling its subscribers and
channels goes through the one outbox (alerts/delivery/dispatch.py: dispatch_advice).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from advisor.advice import Advice, advise
from advisor.models import WorkloadProfile
from advisor.shape import Shape
from alerts.advice_models import AdviceChange, AdviceState

log = logging.getLogger(__name__)

HOLD_EVALUATIONS = 2
TABLE_ROWS = 5


@dataclass(frozen=True, slots=True)
class Hold:
    """The recommendation, and a different one seen `count` evaluations in a row."""

    recommended: int | None
    challenger: int | None = None
    count: int = 0


def hold_after(hold: Hold, seen: int | None, *, first: bool) -> tuple[Hold, bool]:
    """The hold after one evaluation that recommended `seen`, and whether the advice changed.

    The first evaluation sets the baseline silently; an evaluation without advice changes
    nothing; a challenger must be recommended HOLD_EVALUATIONS times in a row.
    """
    if seen is None:
        return hold, False
    if first:
        return Hold(recommended=seen), False
    if seen == hold.recommended:
        return Hold(recommended=seen), False
    count = hold.count + 1 if seen == hold.challenger else 1
    if count >= HOLD_EVALUATIONS:
        return Hold(recommended=seen), True
    return Hold(recommended=hold.recommended, challenger=seen, count=count), False


def table(advice: Advice) -> list[list[str]]:
    rows = []
    for option in advice.options[:TABLE_ROWS]:
        p = option.projection
        rows.append(
            [
                f"{option.rank}{'=' if option.tie else ''}",
                option.label + (" (recommended)" if option.recommended else ""),
                f"{p.task_p50_s:.1f} s",
                f"{p.task_p90_s:.1f} s",
                "–" if option.cost_per_1000 is None else f"${option.cost_per_1000:,.2f}",
                "–" if p.availability is None else f"{p.availability:.1%}",
            ]
        )
    return rows


def evaluate_profile(profile: WorkloadProfile, *, now: datetime) -> AdviceChange | None:
    advice = advise(Shape.of(profile), profile=profile, now=now)
    seen = advice.recommended.endpoint_id if advice.recommended else None
    newest = max((o.projection.newest for o in advice.options if o.projection.newest), default=None)
    with transaction.atomic():
        state, created = AdviceState.objects.select_for_update().get_or_create(profile=profile)
        if not created and newest is not None and newest == state.newest_run:
            return None  # no new runs: not a new evaluation
        first = created or state.evaluated_at is None
        hold = Hold(state.recommended_id, state.challenger_id, state.challenger_count)
        after, changed = hold_after(hold, seen, first=first)
        change = None
        if changed:
            before_label = state.recommended.label if state.recommended else "nothing"
            change = AdviceChange.objects.create(
                profile=profile,
                before_id=hold.recommended,
                after_id=after.recommended,
                before_label=before_label,
                after_label=advice.recommended.label,
                before_table=state.table,
                after_table=table(advice),
                reason=advice.reason,
            )
        state.recommended_id = after.recommended
        state.challenger_id = after.challenger
        state.challenger_count = after.count
        if seen is not None and after.recommended == seen:
            state.table = table(advice)
        state.evaluated_at = now
        state.newest_run = newest
        state.save()
    return change


def evaluate_all(*, now: datetime | None = None) -> list[AdviceChange]:
    now = now or timezone.now()
    changes = []
    for profile in WorkloadProfile.objects.select_related("current_endpoint"):
        change = evaluate_profile(profile, now=now)
        if change is not None:
            changes.append(change)
    return changes
