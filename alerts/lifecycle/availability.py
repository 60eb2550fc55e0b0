"""Availability: the share of error samples over a series' last runs (docs/design.md §7).

An outage opens when each of the last ALERTS_OUTAGE_RUNS runs has ≥ ALERTS_OUTAGE_ERROR_SHARE
errors (two failed runs, not one failed run after a good one), and resolves when the share over
those runs is under half that; runs without any sample (a missing key, a run that never
started) say nothing about the provider and are skipped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count, Q

from alerts.detection.detector import Verdict
from alerts.lifecycle.series import series_runs
from benchmarks.models import Run, Sample


@dataclass(frozen=True, slots=True)
class Availability:
    verdict: Verdict
    samples: int
    errors: int
    categories: dict[str, int] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)  # per run: slot, ok, errors

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.samples if self.samples else None


def check(run: Run) -> Availability:
    """Availability of run's series (endpoint × workload × vantage) over its last runs."""
    recent_runs = list(
        series_runs(run)
        .filter(Q(ok_count__gt=0) | Q(error_count__gt=0), slot__lte=run.slot)
        .order_by("-slot")
        .only("slot", "ok_count", "error_count")[: settings.ALERTS_OUTAGE_RUNS]
    )
    if not recent_runs:
        return Availability(Verdict.NO_DATA, 0, 0)
    ids = [r.id for r in recent_runs]
    errors = sum(r.error_count for r in recent_runs)
    categories = Counter()
    if errors:
        categories = Counter(
            dict(
                Sample.objects.filter(
                    run_id__in=ids, slot__gte=recent_runs[-1].slot, slot__lte=run.slot
                )
                .exclude(error_category="")
                .values_list("error_category")
                .annotate(n=Count("id"))
                .values_list("error_category", "n")
            )
        )
    samples = sum(r.ok_count + r.error_count for r in recent_runs)
    share = errors / samples
    threshold = settings.ALERTS_OUTAGE_ERROR_SHARE
    if all_failed(recent_runs, threshold=threshold):
        verdict = Verdict.POSITIVE
    elif share < threshold / 2:
        verdict = Verdict.CLEAR
    else:
        verdict = Verdict.HOLD
    per_run = [
        {"slot": r.slot.isoformat(), "ok": r.ok_count, "errors": r.error_count}
        for r in sorted(recent_runs, key=lambda r: r.slot)
    ]
    return Availability(verdict, samples, errors, dict(categories.most_common()), per_run)


def all_failed(runs: list[Run], *, threshold: float) -> bool:
    """Each of the last ALERTS_OUTAGE_RUNS runs (newest first) failed at ≥ threshold; fewer runs
    than that cannot open an outage yet."""
    if len(runs) < settings.ALERTS_OUTAGE_RUNS:
        return False
    return all(run.error_count >= threshold * (run.ok_count + run.error_count) for run in runs)
