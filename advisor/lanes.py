"""Lanes in the advice: does the fast lane pay for itself in the workload's budget?

Each lane of a model is an endpoint of its own (providers.lanes), so each is a candidate of its
own in the ranking, with its own measured runs (a run served below its lane left out) and its
own prices. Where a fast lane (priority or latency-optimized) and the standard lane of the same
model at the same provider are both ranked, the advice compares them: task time saved per task
(the projection's p50 and p90, benchmarks.task_time) against the extra cost per task (list
prices, benchmarks.money), judged against the workload's latency budget and price ceiling:

- it **pays for itself** when the standard lane misses the budget and the fast lane meets it
  (inside the price ceiling too): the premium buys the budget;
- it **does not** when the standard lane already meets the budget (the time saved is not
  needed), when the fast lane is no faster at p90, when it is over the price ceiling, or when
  neither lane meets the budget.

The break-even value of time (the extra cost ÷ the p50 time saved, per hour) says what an hour
of task time must be worth to a team for the premium to pay on time alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from providers.lanes import LATENCY_OPTIMIZED, PRIORITY, STANDARD

from .ranking import Option
from .shape import Shape
from .wording import dollars, seconds

FAST = (PRIORITY, LATENCY_OPTIMIZED)


@dataclass(frozen=True, slots=True)
class LaneVerdict:
    """A fast lane against the standard lane of the same model at the same provider."""

    standard: Option
    fast: Option
    pays: bool
    why: str

    @property
    def model(self) -> str:
        return self.fast.model

    @property
    def seconds_saved_p50(self) -> float:
        return self.standard.projection.task_p50_s - self.fast.projection.task_p50_s

    @property
    def seconds_saved_p90(self) -> float:
        return self.standard.projection.task_p90_s - self.fast.projection.task_p90_s

    @property
    def extra_usd_per_task(self) -> float | None:
        if self.fast.cost_per_task is None or self.standard.cost_per_task is None:
            return None
        return self.fast.cost_per_task - self.standard.cost_per_task

    @property
    def break_even_usd_per_hour(self) -> float | None:
        """What an hour of task time saved must be worth for the premium to pay (None when the
        fast lane saves no time or costs no more)."""
        extra, saved = self.extra_usd_per_task, self.seconds_saved_p50
        if extra is None or extra <= 0 or saved <= 0:
            return None
        return extra / saved * 3600

    @property
    def text(self) -> str:
        verb = "pays for itself" if self.pays else "does not pay for itself"
        return (
            f"The {self.fast.lane} lane of {self.standard.display_name or self.model} at "
            f"{self.fast.provider} {verb}: {self._trade()}; {self.why}."
        )

    def _trade(self) -> str:
        saved = self.seconds_saved_p50
        time = f"saves {seconds(saved)}" if saved >= 0 else f"adds {seconds(-saved)}"
        extra = self.extra_usd_per_task
        if extra is None:
            return f"it {time} per task (p50) at a price not listed"
        money = f"{dollars(extra * 1000)} more" if extra >= 0 else f"{dollars(-extra * 1000)} less"
        line = f"it {time} per task (p50) for {money} per 1,000 tasks"
        hourly = self.break_even_usd_per_hour
        if hourly is not None:
            line += f" (worth it on time alone above {dollars(hourly)} an hour)"
        return line

    def as_dict(self) -> dict[str, Any]:
        extra = self.extra_usd_per_task
        return {
            "model": self.fast.model,
            "provider": self.fast.provider,
            "lane": self.fast.lane,
            "endpoint": self.fast.slug,
            "standard_endpoint": self.standard.slug,
            "pays": self.pays,
            "seconds_saved_p50": self.seconds_saved_p50,
            "seconds_saved_p90": self.seconds_saved_p90,
            "cost_per_task": extra,
            "usd_per_1000_tasks": None if extra is None else extra * 1000,
            "break_even_usd_per_hour": self.break_even_usd_per_hour,
            "text": self.text,
        }


def judge(standard: Option, fast: Option, shape: Shape) -> tuple[bool, str]:
    """(pays, why) for a fast lane against the standard one (both ranked: classified)."""
    budget = seconds(shape.budget_s)
    fast_p90, standard_p90 = fast.projection.task_p90_s, standard.projection.task_p90_s
    if fast_p90 >= standard_p90:
        return False, (
            f"it is no faster at p90 ({seconds(fast_p90)} against {seconds(standard_p90)})"
        )
    if not fast.within_price and shape.max_cost_usd is not None:
        return False, f"it is over the {dollars(shape.max_cost_usd)} price ceiling per task"
    if standard.inside_budget:
        return False, (
            f"the standard lane already meets the {budget} budget "
            f"(p90 {seconds(standard_p90)}), so the time saved is not needed"
        )
    if not fast.within_time:
        return False, (
            f"neither lane meets the {budget} budget "
            f"(p90 {seconds(fast_p90)} against {seconds(standard_p90)})"
        )
    return True, (
        f"only the {fast.lane} lane meets the {budget} budget "
        f"(p90 {seconds(fast_p90)} against {seconds(standard_p90)})"
    )


def lane_rows(options: list[Option]) -> list[Option]:
    """The rows lane_verdicts reads: each fast lane and the standard lane of its model at its
    provider."""
    fast = {(o.provider_slug, o.model) for o in options if o.lane in FAST}
    return [o for o in options if (o.provider_slug, o.model) in fast]


def lane_verdicts(options: list[Option], shape: Shape) -> list[LaneVerdict]:
    """Every ranked fast lane with a ranked standard lane of the same model at the same
    provider, in ranking order of the fast lane (`options` already ranked)."""
    standard = {(o.provider_slug, o.model): o for o in options if o.lane == STANDARD}
    verdicts = []
    for option in options:
        base = standard.get((option.provider_slug, option.model))
        if option.lane in FAST and base is not None:
            pays, why = judge(base, option, shape)
            verdicts.append(LaneVerdict(standard=base, fast=option, pays=pays, why=why))
    return verdicts
