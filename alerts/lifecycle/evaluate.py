"""Evaluating a finished run: its series through the detector, the hysteresis and the guards.

One evaluation round = the series of one run (decode speed, TTFT, availability), tested
together (Benjamini–Hochberg across every arm of them) in one transaction that also writes the
alerts and their events. Evaluations of one vantage are serialized by a row lock on its
ProbeState, and the Evaluation row (unique per run) makes a redelivered task a no-op.

While a speed alert is open its series is tested against the baseline it opened against
(Alert.frozen_baseline), so it resolves only when the series is really back. After an alert is
accepted as the new baseline, the new segment has too little history to fit a baseline of its
own for a while (until `min_baseline` runs): meanwhile it is tested against the old frozen
baseline moved to the accepted level, for changes of `major_effect` or more only.

This module never talks to Celery: the task (tasks.py) sends what an evaluation produced.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.utils import timezone

from alerts.config import detector_config
from alerts.detection.baseline import Baseline
from alerts.detection.detector import (
    Judgement,
    SeriesInput,
    SeriesTest,
    Verdict,
    assess_together,
    describe,
    judge,
)
from alerts.detection.hysteresis import Streak, Transition, advance, counted_at
from alerts.detection.recovery import Opened
from alerts.detection.rules import SPEED_METRICS, DetectorConfig, MetricRule
from alerts.lifecycle import availability, confirm, guards, series
from alerts.lifecycle.report import error_rates, peers, speed_snapshot
from alerts.lifecycle.series import RUN_MEDIAN, SUMMARIZED, SeriesData, SeriesKey
from alerts.lifecycle.transitions import (
    active_alert,
    active_alerts,
    close_as_new_normal,
    escalate_alert,
    open_alert,
    resolve_alert,
    update_alert,
)
from alerts.models import Alert, Evaluation, Kind, Metric, ProbeState, SeriesState, Severity
from benchmarks.models import Run

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What one evaluation did (for logs and tests)."""

    verdicts: dict[str, str] = field(default_factory=dict)
    opened: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    escalated: list[int] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)
    confirmation: int | None = None  # the confirmation run this evaluation queued

    @property
    def changed(self) -> bool:
        """Whether an alert opened, resolved or escalated: something to email about."""
        return bool(self.opened or self.resolved or self.escalated)


def evaluate_after_run(run_id: int) -> Outcome | None:
    """Evaluate the series of a finished run; None if it is missing, unfinished or done before."""
    config = detector_config()
    with transaction.atomic():
        run = (
            Run.objects.select_related("endpoint__provider", "workload", "vantage")
            .filter(id=run_id)
            .first()
        )
        if run is None or run.status not in SUMMARIZED:
            return None
        ProbeState.objects.get_or_create(vantage=run.vantage)
        probe = ProbeState.objects.select_for_update().get(vantage=run.vantage)
        evaluation, created = Evaluation.objects.get_or_create(run=run)
        if not created:
            return None
        outcome = Round(run, evaluation, probe, config).evaluate()
        evaluation.summary = outcome.__dict__
        evaluation.save(update_fields=["summary"])
    return outcome


@dataclass
class SpeedSeries:
    state: SeriesState
    data: SeriesData
    rule: MetricRule
    alert: Alert | None = None  # the series' active alert, locked
    frozen: Baseline | None = None
    opened: Opened | None = None  # what the open alert opened on
    blind: bool = False  # a new segment too young for its own baseline
    test: SeriesTest | None = None
    judgement: Judgement | None = None
    transition: Transition | None = None


def _streak(item: SpeedSeries) -> Streak:
    """The series' hysteresis as its state row keeps it."""
    at = item.state.positive_at
    return Streak(
        item.state.positives,
        item.state.clears,
        item.alert is not None,
        item.state.muted,
        at.timestamp() if at is not None else None,
    )


class Round:
    def __init__(
        self, run: Run, evaluation: Evaluation, probe: ProbeState, config: DetectorConfig
    ) -> None:
        self.run, self.evaluation, self.probe, self.config = run, evaluation, probe, config
        self.now = timezone.now()
        self.outcome = Outcome()
        self.family = 0  # series tested together (Benjamini–Hochberg family)

    def states(self) -> dict[str, SeriesState]:
        """The run's series' states, one query (rows created on a series' first evaluation)."""
        run = self.run
        metrics = [*SPEED_METRICS, Metric.AVAILABILITY]
        found = {
            state.metric: state
            for state in SeriesState.objects.filter(
                endpoint_id=run.endpoint_id,
                workload_id=run.workload_id,
                vantage_id=run.vantage_id,
                metric__in=metrics,
            )
        }
        for metric in metrics:
            if metric not in found:
                key = SeriesKey.of(run, metric).filter()
                found[metric], _ = SeriesState.objects.get_or_create(**key)
        return found

    def evaluate(self) -> Outcome:
        states = self.states()
        run = self.run
        alerts = active_alerts(
            [*SPEED_METRICS, Metric.AVAILABILITY],
            endpoint=run.endpoint,
            workload=run.workload,
            vantage=run.vantage,
        )
        speeds = self.test_speed(states, alerts)
        outage_state = states[Metric.AVAILABILITY]
        outage = None
        if not self.evaluated_later(outage_state):
            outage = availability.check(self.run)
            reason = f"{outage.errors} of {outage.samples} requests failed"
            self.record(outage_state, outage.verdict, reason)
        suppress = self.probe_round()
        for item in speeds:
            self.apply_speed(item, suppress=suppress)
        if outage is not None:
            self.apply_outage(
                outage, outage_state, alerts.get(Metric.AVAILABILITY), suppress=suppress
            )
        outage_open = alerts.get(Metric.AVAILABILITY) is not None or bool(
            outage is not None and outage.verdict == Verdict.POSITIVE
        )
        suspects = [
            confirm.Suspect(
                item.state,
                item.judgement,
                item.test,
                item.alert is not None or item.transition == Transition.OPEN,
                item.data.history.t,
            )
            for item in speeds
            if item.judgement is not None
        ]
        queued = confirm.after_evaluation(self.run, suspects, outage_open=outage_open)
        if queued is not None:
            self.outcome.confirmation = queued.id
        return self.outcome

    def evaluated_later(self, state: SeriesState) -> bool:
        """A later run of this series was evaluated first (tasks can overtake each other):
        going back would replay the hysteresis out of order, so this run is skipped."""
        return state.last_slot is not None and state.last_slot >= self.run.slot

    def test_speed(
        self, states: dict[str, SeriesState], alerts: dict[str, Alert]
    ) -> list[SpeedSeries]:
        states = {m: states[m] for m in SPEED_METRICS if not self.evaluated_later(states[m])}
        loaded = series.load(self.run, list(states), self.config) if states else {}
        items = []
        for metric, state in states.items():
            item = SpeedSeries(state, loaded[metric], self.config.rules[metric])
            item.alert = alert = alerts.get(metric)
            if alert is not None and alert.frozen_baseline:
                item.frozen = Baseline.from_dict(alert.frozen_baseline)
                item.opened = Opened.from_dict(alert.opened_on) if alert.opened_on else None
            elif alert is None:
                self.accepted_level(item)
            items.append(item)
        # A run that measured nothing of a metric (failed outright) adds no evidence: testing
        # the series again would re-read the run before it, and count its verdict twice.
        measured = [i for i in items if getattr(self.run, RUN_MEDIAN[i.rule.metric]) is not None]
        unmeasured = [i for i in items if getattr(self.run, RUN_MEDIAN[i.rule.metric]) is None]
        for item in unmeasured:
            reason = "this run measured nothing: no new evidence"
            item.judgement = Judgement(Verdict.NO_DATA, None, "minor", reason)
            self.record(item.state, Verdict.NO_DATA, reason)
        items = measured
        streaks = [_streak(i) for i in items]
        tests = assess_together(
            [
                SeriesInput(
                    i.data.history,
                    i.rule,
                    i.frozen,
                    i.opened,
                    i.data.zone,
                    counted_at=counted_at(k),
                )
                for i, k in zip(items, streaks, strict=True)
            ],
            now=self.run.slot.timestamp(),
            config=self.config,
            peers=series.provider_noise(self.run, SPEED_METRICS, self.config),
        )
        self.family = sum(len(t.arms) for t in tests)
        judgements = judge(tests, self.config)
        for item, streak, test, judgement in zip(items, streaks, tests, judgements, strict=True):
            item.test, item.judgement = test, judgement
            streak, item.transition = advance(
                streak,
                judgement.verdict,
                self.config,
                recovered=judgement.recovered,
                fresh=judgement.fresh,
                new_normal=judgement.new_normal,
                at=self.run.slot.timestamp(),
            )
            item.state.positives, item.state.clears = streak.positives, streak.clears
            item.state.positive_at = (
                datetime.fromtimestamp(streak.positive_at, UTC)
                if streak.positive_at is not None
                else None
            )
            item.state.muted = streak.muted
            item.state.last_shift = test.shift
            if test.noise_lags is not None:  # an open alert's frozen baseline reads none
                item.state.noise_lags = test.noise_lags.as_dict()
            reason = judgement.reason + (
                " (new baseline: large changes only)" if item.blind else ""
            )
            self.record(item.state, judgement.verdict, reason)
        return [*items, *unmeasured]

    def accepted_level(self, item: SpeedSeries) -> None:
        """In the blind time after "accept as new baseline": test against the old frozen
        baseline moved to the accepted level, for large changes only."""
        bounds, segment = item.data.bounds, item.data.segment
        if segment is None:
            return
        own = item.data.history.between(
            bounds.baseline_start.timestamp(), bounds.long_start.timestamp()
        )
        if self.config.enough_baseline(own.t):
            return  # the new segment has a baseline of its own
        accepted = segment.alert
        if accepted is None or not accepted.frozen_baseline or accepted.shift is None:
            return
        step = item.rule.worse_sign * item.rule.log_shift(accepted.shift)
        item.frozen = Baseline.from_dict(accepted.frozen_baseline).shifted(step)
        item.rule = replace(item.rule, min_effect=self.config.major_effect)
        item.blind = True

    def record(self, state: SeriesState, verdict: Verdict, reason: str) -> None:
        state.last_verdict, state.last_reason = verdict, reason[:300]
        state.last_slot, state.evaluated_at = self.run.slot, self.now
        state.save()
        self.outcome.verdicts[state.metric] = f"{verdict}: {reason}"

    def series(self, metric: str) -> dict:
        run = self.run
        return {
            "endpoint": run.endpoint,
            "workload": run.workload,
            "vantage": run.vantage,
            "metric": metric,
        }

    def speed_snapshot(self, item: SpeedSeries, *, detailed: bool) -> dict:
        rule = item.rule
        detail = describe(
            item.data.history,
            item.test.baseline,
            now=self.run.slot.timestamp(),
            rule=rule,
            config=self.config,
        )
        extra = {
            "severity": item.judgement.severity,
            "arm": item.judgement.arm,
            "frozen": item.test.frozen,
            "blind": item.blind,
            "verdict": str(item.judgement.verdict),
            "recovered": item.judgement.recovered,
            "alert_effect": item.test.alert_effect,
        }
        if detailed:
            since = self.run.slot - timedelta(hours=self.config.long_hours)
            if confirmed := confirm.confirmed_by(self.run, since=since):
                extra["confirmed_by"] = confirmed
            extra["peers"] = peers(self.run, rule, item.data.bounds)
            extra.update(error_rates(self.run, item.data.bounds))
            if detail.onset is not None:
                extra["first_bad_at"] = datetime.fromtimestamp(detail.onset, UTC).isoformat()
        return speed_snapshot(
            test=item.test,
            detail=detail,
            q_value=item.judgement.q_value,
            family=self.family,
            reason=item.judgement.reason,
            bounds=item.data.bounds,
            config=self.config,
            extra=extra,
            zone=item.data.zone,
        )

    def apply_speed(self, item: SpeedSeries, *, suppress: bool) -> None:
        metric = item.data.key.metric
        alert = item.alert
        verdict = item.judgement.verdict
        if item.transition == Transition.OPEN:
            if suppress:
                self.outcome.suppressed.append(metric)
                return
            snapshot = self.speed_snapshot(item, detailed=True)
            first_bad = snapshot.get("first_bad_at")
            alert = open_alert(
                series=self.series(metric),
                kind=Kind.REGRESSION,
                severity=item.judgement.severity,
                digest_only=guards.is_flapping(item.data.key, now=self.now),
                snapshot=snapshot,
                evaluation=self.evaluation,
                first_bad_at=datetime.fromisoformat(first_bad) if first_bad else None,
                client_version=self.run.client_version,
                frozen_baseline=item.test.baseline.as_dict(),
                opened_on=item.judgement.opened.as_dict(),
            )
            self.outcome.opened.append(alert.id)
        elif alert is None or verdict == Verdict.NO_DATA:
            return
        elif item.transition == Transition.NEW_NORMAL:
            snapshot = self.speed_snapshot(item, detailed=True)
            # History starts again where the alert opened: the new level is its baseline.
            starts_at = datetime.fromtimestamp(item.opened.at, UTC)
            close_as_new_normal(alert, snapshot, self.evaluation, starts_at=starts_at)
            self.outcome.resolved.append(alert.id)
        elif item.transition == Transition.RESOLVE:
            snapshot = self.speed_snapshot(item, detailed=True)
            flapping = guards.is_flapping(item.data.key, now=self.now)
            resolve_alert(alert, snapshot, self.evaluation, digest_only=flapping)
            self.outcome.resolved.append(alert.id)
        elif (
            verdict == Verdict.POSITIVE
            and item.judgement.severity == Severity.MAJOR
            and alert.severity == Severity.MINOR
        ):
            escalate_alert(alert, self.speed_snapshot(item, detailed=True), self.evaluation)
            self.outcome.escalated.append(alert.id)
        else:
            update_alert(alert, self.speed_snapshot(item, detailed=True), self.evaluation)

    def apply_outage(
        self, outage, state: SeriesState, alert: Alert | None, *, suppress: bool
    ) -> None:
        key = SeriesKey.of(self.run, Metric.AVAILABILITY)
        snapshot = {
            "error_rate": outage.error_rate,
            "error_categories": outage.categories,
            "errors": outage.errors,
            "samples": outage.samples,
            "runs": outage.runs,
        }
        if outage.verdict == Verdict.CLEAR and state.muted:
            state.muted = False
            state.save(update_fields=["muted"])
        if outage.verdict == Verdict.POSITIVE and alert is None and not state.muted:
            if suppress:
                self.outcome.suppressed.append(Metric.AVAILABILITY)
                return
            alert = open_alert(
                series=self.series(Metric.AVAILABILITY),
                kind=Kind.OUTAGE,
                severity=Severity.MAJOR,
                digest_only=guards.is_flapping(key, now=self.now),
                snapshot=snapshot,
                evaluation=self.evaluation,
                first_bad_at=self.first_failing_slot(outage),
                client_version=self.run.client_version,
            )
            self.outcome.opened.append(alert.id)
        elif alert is not None and outage.verdict == Verdict.CLEAR:
            flapping = guards.is_flapping(key, now=self.now)
            resolve_alert(alert, snapshot, self.evaluation, digest_only=flapping)
            self.outcome.resolved.append(alert.id)
        elif alert is not None and outage.verdict != Verdict.NO_DATA:
            update_alert(alert, snapshot, self.evaluation)

    @staticmethod
    def first_failing_slot(outage) -> datetime | None:
        for run in outage.runs:
            if run["errors"] * 2 >= run["ok"] + run["errors"]:
                return datetime.fromisoformat(run["slot"])
        return None

    def probe_round(self) -> bool:
        """Update the vantage's probe-infrastructure alert; True while one is active."""
        check = guards.probe_check(
            self.run.vantage_id, slot=self.run.slot, recent_hours=self.config.recent_hours
        )
        alert = active_alert(kind=Kind.INFRASTRUCTURE, vantage=self.run.vantage)
        streak = Streak(self.probe.positives, self.probe.clears, alert is not None)
        streak, transition = advance(streak, check.verdict, self.config)
        self.probe.positives, self.probe.clears = streak.positives, streak.clears
        self.probe.share, self.probe.evaluated_at = check.share, self.now
        self.probe.save()
        if transition != Transition.OPEN and alert is None:
            return False
        snapshot = {
            "share": check.share,
            "positive": check.positive,
            "total": check.total,
            "endpoints": check.endpoints,
            "series": guards.describe_series(check.series),
        }
        series_filter = {
            "vantage": self.run.vantage,
            "metric": Metric.PROBE,
            "endpoint": None,
            "workload": None,
        }
        if transition == Transition.OPEN:
            alert = open_alert(
                series=series_filter,
                kind=Kind.INFRASTRUCTURE,
                severity=Severity.MAJOR,
                digest_only=False,
                snapshot=snapshot,
                evaluation=self.evaluation,
                first_bad_at=self.run.slot,
            )
            self.outcome.opened.append(alert.id)
        elif transition == Transition.RESOLVE and alert is not None:
            resolve_alert(alert, snapshot, self.evaluation, digest_only=False)
            self.outcome.resolved.append(alert.id)
            return False
        elif alert is not None:
            update_alert(alert, snapshot, self.evaluation)
        return alert is not None
