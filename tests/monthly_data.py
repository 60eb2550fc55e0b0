"""A seeded year for the monthly report's tests: synthetic history (seed_history), a team's own
workload measured in June, alerts around June and one change of advice in June."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine

from advisor.models import WorkloadProfile
from alerts.models import AdviceChange, Alert, Kind, Metric, Severity, Status
from benchmarks.models import Sample, Workload
from benchmarks.synthetic import seed_history
from providers.models import Endpoint, Provider
from tests import dashboard_data as data
from tests.custom_workload_data import TEXT_MARK, prompt_suite, system_prompt

# Early July: June is the last complete month, in any TIME_ZONE bin/fake-clock-tests picks.
NOW = datetime(2026, 7, 3, 12, 0, tzinfo=UTC)
MID_JUNE = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


def seed_year(*, days: int = 365) -> dict:
    """`days` of history for two synthetic endpoints up to NOW, and June's alerts and advice."""
    # The standard workloads and the default vantage, as migrations make them: a transactional
    # test run before this one (browser tests) flushes what the migrations made.
    data.default_workloads()
    data.vantage()
    seed_history(endpoints=2, days=days, workloads=1, slots=3, samples_per_run=1, now=NOW)
    endpoints = list(Endpoint.objects.order_by("id"))
    custom = Workload.objects.create(
        slug="acme-support",
        name="Acme support",
        system_prompt=system_prompt(2_000),
        prompt_suite=prompt_suite(3),
    )
    for day in range(3):
        slot = MID_JUNE + timedelta(days=day)
        for ep, tps in zip(endpoints, (90.0, 60.0), strict=True):
            data.run(ep, slot, wl=custom, decode_tps=tps, ttft_ms=400.0)
    base = Workload.objects.get(slug="base")
    vantage = data.vantage()
    with time_machine.travel(MID_JUNE, tick=False):
        resolved = Alert.objects.create(
            kind=Kind.REGRESSION,
            metric=Metric.DECODE,
            endpoint=endpoints[0],
            workload=base,
            vantage=vantage,
            severity=Severity.MAJOR,
            status=Status.RESOLVED,
            closed_at=MID_JUNE + timedelta(days=2),
        )
        profile = WorkloadProfile.objects.create(slug="support-bot", name="Support bot")
        advice = AdviceChange.objects.create(
            profile=profile,
            before_label=endpoints[1].label,
            after_label=endpoints[0].label,
            reason="faster for the same price",
        )
    with time_machine.travel(MID_JUNE - timedelta(days=60), tick=False):
        old = Alert.objects.create(
            kind=Kind.OUTAGE,
            metric=Metric.AVAILABILITY,
            endpoint=endpoints[1],
            workload=base,
            vantage=vantage,
            status=Status.RESOLVED,
            closed_at=MID_JUNE - timedelta(days=59),
        )
    return {
        "endpoints": endpoints,
        "custom": custom,
        "resolved": resolved,
        "old": old,
        "advice": advice,
        "mark": TEXT_MARK,
    }


def remove(seeded: dict) -> None:
    """Delete what seed_year made (a module fixture's data outlives its tests' transactions)."""
    Sample.objects.filter(run__endpoint__in=seeded["endpoints"]).delete()
    Provider.objects.filter(endpoints__in=seeded["endpoints"]).delete()
    seeded["custom"].delete()
    WorkloadProfile.objects.filter(slug="support-bot").delete()
    Alert.objects.filter(id__in=[seeded["resolved"].id, seeded["old"].id]).delete()
