"""What an alert email and page show besides the test: peers, error rates, the bucket table.

Everything returned is JSON-ready (stored as an event's snapshot), so an email shows the numbers
as they were when the event happened, however late it is sent.
"""

from __future__ import annotations

import math
from collections import defaultdict
from statistics import median

from django.db.models import BooleanField, ExpressionWrapper, Q, Sum

from alerts.detection.detector import SeriesDetail, SeriesTest
from alerts.detection.local_time import slot_label
from alerts.detection.rules import DetectorConfig, MetricRule
from alerts.lifecycle.series import RUN_MEDIAN, SUMMARIZED, Bounds, series_runs
from alerts.lifecycle.snapshot import ArmFigures, BucketFigures, SpeedSnapshot
from benchmarks.models import Run
from providers.models import Endpoint


def model_keys(endpoint: Endpoint) -> set[str]:
    """Names under which the same model may appear at another provider (case-insensitive)."""
    keys = {endpoint.model.lower(), endpoint.model.rsplit("/", 1)[-1].lower()}
    if endpoint.display_name:
        keys.add(endpoint.display_name.lower())
    return keys


def peers(run: Run, rule: MetricRule, bounds: Bounds) -> list[dict]:
    """The same model at other providers, same workload and vantage, over the same days.

    Medians of the runs' own medians (Run summaries: no sample scan), baseline and recent.
    """
    keys = model_keys(run.endpoint)
    column = RUN_MEDIAN[rule.metric]
    others = [
        other
        for other in Endpoint.objects.exclude(id=run.endpoint_id).select_related("provider")
        if keys & model_keys(other)
    ]
    base: dict[int, list[float]] = defaultdict(list)
    recent: dict[int, list[float]] = defaultdict(list)
    if others:
        # Values only, every peer and both windows in one query: an hourly series' month of
        # slots is thousands of datetimes to parse for nothing.
        runs = Run.objects.filter(
            endpoint__in=others,
            workload_id=run.workload_id,
            vantage_id=run.vantage_id,
            status__in=SUMMARIZED,
            slot__gt=bounds.baseline_start,
            slot__lte=bounds.end,
            **{f"{column}__isnull": False},
        ).order_by()
        is_recent = ExpressionWrapper(Q(slot__gt=bounds.recent_start), BooleanField())
        for endpoint_id, value, in_recent in runs.values_list("endpoint_id", column, is_recent):
            (recent if in_recent else base)[endpoint_id].append(value)
    out = []
    for other in others:
        base_med = median(base[other.id]) if base.get(other.id) else None
        recent_med = median(recent[other.id]) if recent.get(other.id) else None
        out.append(
            {
                "endpoint": other.label,
                "slug": other.slug,
                "baseline_median": base_med,
                "recent_median": recent_med,
                "change": rule.change(base_med, recent_med) if base_med and recent_med else None,
                "recent_runs": len(recent.get(other.id, ())),
            }
        )
    return out


def error_rates(run: Run, bounds: Bounds) -> dict:
    """Error share of the series' requests in the recent and baseline windows (one query)."""
    recent = Q(slot__gt=bounds.recent_start)
    totals = (
        series_runs(run)
        .filter(slot__gt=bounds.baseline_start, slot__lte=bounds.end)
        .aggregate(
            ok=Sum("ok_count", filter=recent, default=0),
            errors=Sum("error_count", filter=recent, default=0),
            base_ok=Sum("ok_count", filter=~recent, default=0),
            base_errors=Sum("error_count", filter=~recent, default=0),
        )
    )
    errors, samples = totals["errors"], totals["ok"] + totals["errors"]
    base_errors, base_samples = totals["base_errors"], totals["base_ok"] + totals["base_errors"]
    return {
        "errors": errors,
        "samples": samples,
        "error_rate": errors / samples if samples else None,
        "baseline_error_rate": base_errors / base_samples if base_samples else None,
    }


def _span_days(test: SeriesTest) -> int | None:
    """Whole days from the baseline's first run to its last: what it really covers, which is
    less than baseline_days while a series is young."""
    baseline = test.baseline
    if baseline is None or baseline.start is None:
        return None
    return max(1, math.ceil((baseline.end - baseline.start) / 86_400))


def speed_snapshot(
    *,
    test: SeriesTest,
    detail: SeriesDetail | None,
    q_value: float | None,
    family: int,
    reason: str,
    bounds: Bounds,
    config: DetectorConfig,
    extra: dict,
    zone: str | None = None,
) -> dict:
    """The numbers of one speed evaluation (alerts.lifecycle.snapshot.SpeedSnapshot), JSON-ready;
    `extra`: the judgement and, when detailed, peers, error rates and the onset; `zone`: the
    series' demand time zone, whose clock its slots follow (None: UTC)."""
    rule = config.rules[test.metric]
    snap = SpeedSnapshot.from_json(extra)
    snap.metric, snap.unit, snap.min_effect = test.metric, rule.unit, rule.min_effect
    snap.baseline_median, snap.recent_median = test.baseline_median, test.recent_median
    snap.shift, snap.ci_low, snap.ci_high = test.shift, test.ci_low, test.ci_high
    snap.ci_level, snap.p_value, snap.q_value = config.ci_level, test.p_value, q_value
    snap.family, snap.n_baseline, snap.n_recent = family, test.n_baseline, test.n_recent
    snap.reason = reason
    snap.baseline_start = bounds.baseline_start.isoformat()
    snap.recent_start = bounds.recent_start.isoformat()
    snap.end = bounds.end.isoformat()
    snap.segment_start = bounds.segment_start.isoformat() if bounds.segment_start else None
    snap.long_start = bounds.long_start.isoformat()
    snap.recent_hours, snap.long_hours = config.recent_hours, config.long_hours
    snap.baseline_days, snap.baseline_span_days = config.baseline_days, _span_days(test)
    snap.arms = [
        ArmFigures(arm.name, arm.n, rule.worse_fraction(arm.shift), arm.p_value)
        for arm in test.arms
    ]
    if detail is not None:
        snap.buckets = [
            BucketFigures(
                bucket=row.bucket,
                label=slot_label(row.bucket, zone),
                n_baseline=row.n_baseline,
                n_recent=row.n_recent,
                baseline_median=row.baseline_median,
                recent_median=row.recent_median,
                change=row.change,
            )
            for row in detail.buckets
        ]
    return snap.to_json()
