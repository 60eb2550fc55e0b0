"""The advice for one workload: candidates, projections, ranking, reason, savings, data basis."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any

import numpy as np
from django.utils import timezone

from benchmarks.buckets import BUCKETS
from benchmarks.confidential import shape as workload_shape
from benchmarks.models import Vantage, Workload
from benchmarks.money import Prices, usd
from benchmarks.selectors.scope import resolve_vantage
from providers.models import Endpoint

from .batch import Stacked, project_batch, project_lean
from .candidates import Candidate, candidates
from .digest import load_digest, load_stacked
from .lanes import LaneVerdict, lane_rows, lane_verdicts
from .measured import prepare_measured
from .measures import FIELDS, WINDOW_DAYS, load_points
from .models import WorkloadProfile
from .projection import MIN_RUNS, Projection, project_all
from .ranking import Option, rank, reason
from .shape import Shape
from .wording import dollars, seconds

STALE_AFTER = timedelta(hours=48)


@dataclass(slots=True)
class Advice:
    shape: Shape
    generated_at: datetime
    window_days: int
    vantage: str | None
    profile: WorkloadProfile | None = None
    options: list[Option] = field(default_factory=list)  # measured for this shape, ranked
    unmeasured: list[Option] = field(default_factory=list)  # missing runs for this shape
    recommended: Option | None = None
    reason: str = ""
    current: Option | None = None
    savings: dict[str, Any] | None = None
    tod_winners: list[dict[str, Any]] = field(default_factory=list)
    lanes: list[LaneVerdict] = field(default_factory=list)  # fast lane against standard lane
    basis: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    workload: Workload | None = None  # a custom workload: measured on its own runs

    @property
    def runs_noun(self) -> str:
        """What one condition of the answer is: a base run, or a run of the custom workload."""
        return f"runs of {self.workload.name}" if self.workload else "base runs"

    @property
    def thin_count(self) -> int:
        """Ranked endpoints whose answer stands on too few runs (Projection.thin)."""
        return sum(1 for o in self.options if o.projection.thin)

    @property
    def warnings_but_thin(self) -> list[str]:
        """The warnings a table of answers shows per row (thin data is said once under it)."""
        return [w for w in self.warnings if not w.startswith("Thin data")]

    def as_dict(self, *, limit: int | None = None) -> dict[str, Any]:
        """The answer; `results` lists the first `limit` ranked endpoints (all when None), and
        `count` how many are ranked: everything else (the recommendation, savings, winners,
        lanes, basis, warnings) stands on every ranked endpoint either way."""
        shown = self.options if limit is None else self.options[:limit]
        return {
            "profile": self.profile.slug if self.profile else None,
            "shape": self.shape.as_dict(),
            "vantage": self.vantage,
            "window_days": self.window_days,
            "recommended": self.recommended.slug if self.recommended else None,
            "reason": self.reason,
            "count": len(self.options),
            "limit": limit,
            "results": [o.as_dict() for o in shown],
            "not_measured": [
                {"endpoint": o.slug, "label": o.label, "missing": o.projection.missing}
                for o in self.unmeasured
            ],
            "savings": self.savings,
            "time_of_day": self.tod_winners,
            "lanes": [verdict.as_dict() for verdict in self.lanes],
            "basis": self.basis,
            "warnings": self.warnings,
            **self._workload_dict(shown),
        }

    def _workload_dict(self, shown: list[Option]) -> dict[str, Any]:
        """A custom workload's name and shape (never its text), and each row's measured input
        tokens; nothing for the standard advice, whose answer is as it always was."""
        if self.workload is None:
            return {}
        inputs = {o.slug: o.projection.input_tokens for o in shown}
        return {
            "workload": {
                "slug": self.workload.slug,
                "name": self.workload.name,
                "shape": workload_shape(self.workload),
            },
            "results": [{**o.as_dict(), "input_tokens": inputs[o.slug]} for o in shown],
        }


def _option(
    endpoint: Candidate,
    projection,
    shape: Shape,
    costs: dict[tuple, float | None],
    cost: Callable[[Prices], Decimal | None],
) -> Option:
    """`costs`: the task cost by list prices, shared by the options of one answer (a catalogue
    lists a few hundred endpoints at a few dozen prices); `cost`: shape.costs(), made once."""

    def price(value) -> float | None:
        return None if value is None else float(value)

    tokens = projection.input_tokens  # measured per call on a custom workload
    listed = (
        endpoint.price_input_per_mtok,
        endpoint.price_output_per_mtok,
        endpoint.price_cached_input_per_mtok,
        tokens,
    )
    if listed not in costs:
        if tokens is not None:
            cost = replace(shape, input_tokens=max(1, round(tokens))).costs()
        costs[listed] = usd(cost(Prices.of(endpoint)))
    prices = {
        "price_in": price(endpoint.price_input_per_mtok),
        "price_out": price(endpoint.price_output_per_mtok),
        "price_cached": price(endpoint.price_cached_input_per_mtok),
    }
    return Option(
        endpoint_id=endpoint.id,
        slug=endpoint.slug,
        label=endpoint.label,
        display_name=endpoint.display_name,
        lane=endpoint.lane,
        model=endpoint.model,
        provider=endpoint.provider_name,
        provider_slug=endpoint.provider_slug,
        protocol=endpoint.protocol,
        base_url=endpoint.base_url,
        api_key_env=endpoint.api_key_env,
        simulated=endpoint.simulated,
        projection=projection,
        cost_per_task=costs[listed],
        **prices,
    )


def advise(
    shape: Shape,
    *,
    profile: WorkloadProfile | None = None,
    current: Endpoint | None = None,
    vantage: Vantage | str | None = None,
    now: datetime | None = None,
    days: int = WINDOW_DAYS,
    load: Callable[..., dict[int, np.ndarray]] | None = None,
    project: Callable[..., dict[int, Projection]] = project_batch,
    workload: Workload | None = None,
    shown: int | None = None,
) -> Advice:
    """Rank the endpoints the workload accepts by projected task time (see advisor.ranking).

    `shown`: the answer will list only its first `shown` ranked rows (the API's `limit`), so
    the p25–p75 of the rows past them are solved only where the answer uses them (a tie with
    the leaders, the current endpoint, a lane verdict); every figure the answer shows is the
    one the whole ranking gives (advisor.batch.project_lean).

    `load` reads the runs: by default the digest, stacked as the batch projection reads it
    (advisor.digest.load_stacked); advisor.digest.load_digest or advisor.measures.load_points
    (the runs themselves) give the same rows, slower. `project` projects them: all endpoints
    at once by default, advisor.projection.project_all one endpoint at a time (the reference).
    `workload` (default: the profile's) a custom workload: its own runs, read and projected by
    advisor.measured (docs/advisor.md, "A custom workload")."""
    now = now or timezone.now()
    workload = workload or (profile.workload if profile else None)
    if workload is not None:
        load = partial(load_points, workload=workload)
        project = partial(project_all, prepare_one=prepare_measured)
    where = resolve_vantage(vantage)
    current = current or (profile.current_endpoint if profile else None)
    endpoints = candidates(shape, profile)
    ids = [e.id for e in endpoints]
    stacked = load is None and project is project_batch
    measured = _runs(ids, shape, load, stacked=stacked, vantage=where, now=now, days=days)
    spreads = mixtures = None
    if shown is not None and project is project_batch:
        projections, mixtures = project_lean(measured, shape)

        def spreads(rows: list[Option]) -> None:
            mixtures.complete(o.endpoint_id for o in rows)
    else:
        projections = project(measured, shape)
    advice = Advice(
        shape=shape,
        generated_at=now,
        window_days=days,
        vantage=where.slug if where else None,
        profile=profile,
        workload=workload,
    )
    costs: dict[tuple, float | None] = {}
    cost = shape.costs()
    for endpoint in endpoints:
        option = _option(endpoint, projections[endpoint.id], shape, costs, cost)
        (advice.options if option.projection.measured else advice.unmeasured).append(option)
        if current is not None and endpoint.id == current.id:
            advice.current = option
    advice.unmeasured.sort(key=lambda o: o.label.lower())
    advice.recommended = rank(advice.options, shape, spreads=spreads, shown=shown or 0)
    if mixtures is not None:  # what the savings, the lane verdicts and the listed rows read
        spreads([o for o in (advice.current, *lane_rows(advice.options)) if o is not None])
        mixtures.time_of_day(
            (o.endpoint_id for o in advice.options[:shown]),
            (o.endpoint_id for o in tod_pool(advice.options)),
        )
    advice.reason = reason(advice.recommended, advice.options, shape)
    if workload is not None and advice.recommended is None:
        advice.reason = f"No endpoint this profile accepts has a run of {workload.name} yet."
    advice.savings = savings(advice.recommended, advice.current)
    advice.tod_winners = tod_winners(advice.options, advice.recommended)
    advice.lanes = lane_verdicts(advice.options, shape)
    advice.basis, advice.warnings = basis(advice, now=now)
    return advice


def _runs(
    ids: list[int], shape: Shape, load: Callable | None, *, stacked: bool, **window: Any
) -> dict[int, np.ndarray] | Stacked:
    """The endpoints' runs as the projection reads them: the digest's days stacked (the batch
    projection's default), or each endpoint's rows as `load` (the digest's by default) reads
    them, an endpoint without runs given none."""
    if stacked:
        return load_stacked(endpoint_ids=ids, users=shape.concurrency, **window)
    points = (load or load_digest)(endpoint_ids=ids, **window)
    return {e: points.get(e, np.empty((0, len(FIELDS)))) for e in ids}


def savings(chosen: Option | None, current: Option | None) -> dict[str, Any] | None:
    """What switching from the current endpoint to the recommended one is worth."""
    if chosen is None or current is None or not current.projection.measured:
        return None
    if chosen is current:
        return {"current": current.slug, "text": f"{current.label} is already the recommendation."}
    seconds_saved = current.projection.task_p50_s - chosen.projection.task_p50_s
    usd_saved = None
    if chosen.cost_per_task is not None and current.cost_per_task is not None:
        usd_saved = (current.cost_per_task - chosen.cost_per_task) * 1000
    parts = [
        f"saves {seconds(seconds_saved)} per task"
        if seconds_saved >= 0
        else f"adds {seconds(-seconds_saved)} per task"
    ]
    if usd_saved is not None:
        parts.append(
            f"saves {dollars(usd_saved)} per 1,000 tasks"
            if usd_saved >= 0
            else f"costs {dollars(-usd_saved)} more per 1,000 tasks"
        )
    return {
        "current": current.slug,
        "seconds_per_task": seconds_saved,
        "usd_per_1000_tasks": usd_saved,
        "text": f"Switching from {current.label} to {chosen.label} {', '.join(parts)} (p50).",
    }


def tod_pool(options: list[Option]) -> list[Option]:
    """Who the time-of-day winners are chosen from: the endpoints inside the budget (all
    measured ones when none is)."""
    return [o for o in options if o.inside_budget] or options


def tod_winners(options: list[Option], chosen: Option | None) -> list[dict[str, Any]]:
    """The fastest endpoint (p50 task time) in each UTC time-of-day bucket, among tod_pool."""
    pool = tod_pool(options)
    winners = []
    for bucket, label in BUCKETS.items():
        timed = [
            (o.projection.p50_by_bucket[bucket], o)
            for o in pool
            if bucket in o.projection.p50_by_bucket
        ]
        if not timed:
            continue
        p50, best = min(timed, key=lambda pair: pair[0])
        winners.append(
            {
                "bucket": bucket,
                "label": label,
                "endpoint": best.slug,
                "endpoint_label": best.label,
                "task_p50_s": p50,
                "differs": chosen is not None and best is not chosen,
            }
        )
    return winners


def basis(advice: Advice, *, now: datetime) -> tuple[dict[str, Any], list[str]]:
    """The data the answer stands on, and warnings when it is thin or stale."""
    everyone = advice.options + advice.unmeasured
    newest = max((o.projection.newest for o in everyone if o.projection.newest), default=None)
    age_h = (now - newest).total_seconds() / 3600 if newest else None
    data = {
        "runs": sum(o.projection.runs for o in everyone),
        # Of those, runs whose client was saturated (docs/design.md §4): kept, and marked.
        "saturated_runs": sum(o.projection.saturated_runs for o in everyone),
        "samples": sum(o.projection.samples for o in everyone),
        "newest_run": newest.isoformat() if newest else None,
        "newest_run_age_h": age_h,
        "window_days": advice.window_days,
    }
    if advice.workload is not None:
        data["measured_on"] = advice.workload.name
    warnings = []
    if newest is None:
        warnings.append(f"No finished runs in the last {advice.window_days} days: no advice.")
    elif now - newest > STALE_AFTER:
        warnings.append(
            f"Stale: the newest run is {age_h / 24:.1f} days old; speeds may have changed since."
        )
    if advice.thin_count:
        warnings.append(thin_warning(advice.thin_count, len(advice.options), runs=advice.runs_noun))
    return data, warnings


def thin_warning(thin: int, ranked: int, *, runs: str = "base runs") -> str:
    """Once per answer, with the count: the rows themselves are marked ("thin": true in the API,
    a "thin data" badge on the page), so no endpoint is named here."""
    which = (
        "the only ranked endpoint has"
        if ranked == 1
        else f"{thin} of {ranked} ranked endpoints have"
    )
    return (
        f"Thin data: {which} fewer than {MIN_RUNS} {runs} in the window, so their spread is "
        "uncertain (marked thin)."
    )
