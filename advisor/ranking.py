"""Ranking: who is inside the budget, in which order, who ties, and which one to recommend.

Order: endpoints inside the budget (p90 task time within the latency budget and cost within the
price ceiling) first, then the rest, each by p90 task time. A row ties with the row above when
their p25–p75 task-time spreads overlap. The recommendation is the cheapest endpoint tied with
the fastest inside the budget: when the measurements cannot tell them apart, price decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.task_time import verdict

from .projection import Projection
from .shape import Shape
from .wording import dollars, seconds


@dataclass(slots=True)
class Option:
    """One endpoint the profile accepts, with its projection and what the advisor makes of it."""

    endpoint_id: int
    slug: str
    label: str
    model: str
    provider: str
    provider_slug: str
    protocol: str
    base_url: str
    api_key_env: str
    simulated: bool
    price_in: float | None
    price_out: float | None
    price_cached: float | None
    projection: Projection
    cost_per_task: float | None = None
    within_time: bool = False
    within_price: bool = False
    verdict: str = ""
    rank: int | None = None
    tie: bool = False
    recommended: bool = False
    display_name: str = ""
    lane: str = "standard"  # providers.lanes: each lane of a model is a candidate of its own

    @property
    def inside_budget(self) -> bool:
        return self.within_time and self.within_price

    @property
    def cost_per_1000(self) -> float | None:
        return None if self.cost_per_task is None else self.cost_per_task * 1000

    def as_dict(self) -> dict[str, Any]:
        p = self.projection
        return {
            "endpoint": self.slug,
            "label": self.label,
            "provider": self.provider,
            "model": self.model,
            "lane": self.lane,
            "simulated": self.simulated,
            "rank": self.rank,
            "tie": self.tie,
            "recommended": self.recommended,
            "task_p25_s": p.task_p25_s,
            "task_p50_s": p.task_p50_s,
            "task_p75_s": p.task_p75_s,
            "task_p90_s": p.task_p90_s,
            "verdict": self.verdict,
            "inside_budget": self.inside_budget,
            "within_time": self.within_time,
            "within_price": self.within_price,
            "cost_per_task": self.cost_per_task,
            "cost_per_1000_tasks": self.cost_per_1000,
            "availability": p.availability,
            "ttft_ms": p.ttft_ms,
            "decode_tps": p.decode_tps,
            "reasoning_s": p.reasoning_s,
            "runs": p.runs,
            "saturated_runs": p.saturated_runs,
            "samples": p.samples,
            "conditions": p.conditions,
            "newest_run": p.newest.isoformat() if p.newest else None,
            "thin": p.thin,
            "notes": list(p.notes),
            "p50_by_tod_bucket": {str(k): v for k, v in p.p50_by_bucket.items()},
        }


def classify(option: Option, shape: Shape) -> None:
    p90 = option.projection.task_p90_s
    option.verdict = verdict(p90)
    option.within_time = p90 <= shape.budget_s
    option.within_price = shape.max_cost_usd is None or (
        option.cost_per_task is not None and option.cost_per_task <= shape.max_cost_usd
    )


def _overlap(a: Projection, b: Projection) -> bool:
    return a.task_p25_s <= b.task_p75_s and b.task_p25_s <= a.task_p75_s


def rank(
    options: list[Option],
    shape: Shape,
    *,
    spreads: Callable[[list[Option]], None] | None = None,
    shown: int = 0,
) -> Option | None:
    """Classify, sort, rank and mark ties in place; returns the recommended option.

    `spreads` solves the p25–p75 of the rows it is given (advisor.batch.TaskMixtures) where
    only the p90 is known: then only the first `shown` rows, and past them the rows still tied
    with the leaders, are given their spread, tie and rank (the rest keep rank None); the
    recommendation and every shown row are what ranking every row gives."""
    for option in options:
        classify(option, shape)
    options.sort(key=lambda o: (not o.inside_budget, o.projection.task_p90_s, o.label.lower()))
    solved = len(options)
    if spreads is not None:
        solved = min(shown, len(options))
        spreads(options[:solved])
    above: Option | None = None
    for position, option in enumerate(options, start=1):
        if position > solved:
            if spreads is None or above is None or above.rank != 1 or not above.inside_budget:
                break  # no row from here on can tie with the leaders
            spreads(options[solved : solved + max(shown, 1)])
            solved += max(shown, 1)
        same_group = above is not None and above.inside_budget == option.inside_budget
        option.tie = bool(same_group and _overlap(above.projection, option.projection))
        option.rank = above.rank if option.tie and above is not None else position
        above = option
    if not options:
        return None
    chosen = options[0]
    if chosen.inside_budget:
        leaders = [o for o in options if o.rank == 1 and o.inside_budget]
        priced = [o for o in leaders if o.cost_per_task is not None]
        if priced:
            chosen = min(priced, key=lambda o: (o.cost_per_task, o.projection.task_p90_s))
    chosen.recommended = True
    return chosen


def reason(chosen: Option | None, options: list[Option], shape: Shape) -> str:
    """The answer in one line."""
    budget = seconds(shape.budget_s)
    if chosen is None:
        return "No endpoint this profile accepts has been measured for its shape."
    p90 = seconds(chosen.projection.task_p90_s)
    if not chosen.inside_budget:
        if any(o.within_time for o in options) and shape.max_cost_usd is not None:
            return (
                f"Nothing meets both the {budget} budget and the "
                f"{dollars(shape.max_cost_usd)} price ceiling per task: the fastest, "
                f"{chosen.label}, takes p90 {p90} ({chosen.verdict})."
            )
        return (
            f"Nothing meets the {budget} budget: the fastest, {chosen.label}, takes "
            f"p90 {p90} per task ({chosen.verdict})."
        )
    line = f"{chosen.label}: p90 task {p90}, inside the {budget} budget"
    others = [o for o in options if o.inside_budget and o is not chosen]
    if not others:
        return f"{line}; the only endpoint inside it."
    following = others[0]
    if (
        chosen.cost_per_task is not None
        and following.cost_per_task
        and chosen.cost_per_task < following.cost_per_task
    ):
        cheaper = 1 - chosen.cost_per_task / following.cost_per_task
        return f"{line}; {cheaper:.0%} cheaper than the next inside budget ({following.label})."
    gap = following.projection.task_p90_s - chosen.projection.task_p90_s
    if seconds(gap) == seconds(0.0):  # a gap that reads "0.00 s" is a tie to the reader
        return f"{line}; tied on time with {following.label} (their spreads overlap)."
    return f"{line}; {seconds(gap)} faster at p90 than the next inside budget ({following.label})."
