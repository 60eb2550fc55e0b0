"""Confirmation runs: the pure policy (when a series is suspect, how far apart by its noise
model, where the runs go between scheduled ones, cap and budget), and in the database a suspect
series getting ordinary runs spaced by its noise until the evidence is conclusive, within the
cap and the month's budget, never for a failing endpoint; a confirmation inside the provider
episode of the positive before it is not a second positive (hysteresis.independent)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import numpy as np
import pytest
import time_machine

from alerts.detection.baseline import Baseline
from alerts.detection.confirmation import (
    ConfirmPolicy,
    budget_runs,
    decide,
    informative_gap_hours,
    place,
    suspect,
)
from alerts.detection.detector import Verdict
from alerts.detection.hysteresis import Streak, Transition, advance
from alerts.detection.rules import DetectorConfig
from alerts.lifecycle.evaluate import evaluate_after_run
from alerts.lifecycle.series import load
from alerts.models import Alert, SeriesState
from alerts.testing import daily_slots, store_history
from benchmarks.costs import monthly_cost
from benchmarks.dispatch import claim_and_enqueue
from benchmarks.models import Run, RunOrigin, RunStatus, Schedule, Vantage, Workload
from providers.models import Endpoint, Provider

pytestmark = pytest.mark.usefixtures("real_episodes")

T0 = datetime(2026, 3, 10, 18, 0, tzinfo=UTC)
DECODE, TTFT = 70.0, 600.0
POLICY = ConfirmPolicy()
HOUR = 3600.0


# The pure policy


def test_it_is_suspect_one_positive_short_of_opening() -> None:
    common = {"open_after": 2, "is_open": False, "muted": False, "policy": POLICY}
    assert suspect("positive", 0.001, positives=1, **common)
    assert not suspect("positive", 0.001, positives=2, **common)  # that one opens
    assert suspect("hold", 0.05, positives=0, **common)  # below the looser bar
    # an in-between result that merely leans worse (q under 0.5) gets confirmation runs too
    assert suspect("hold", 0.3, positives=0, **common)
    assert not suspect("hold", 0.8, positives=0, **common)
    assert not suspect("clear", 0.001, positives=0, **common)
    assert not suspect("no_data", None, positives=0, **common)


def test_it_is_never_suspect_while_open_muted_or_off() -> None:
    common = {"open_after": 2, "positives": 1}
    assert not suspect("positive", 0.001, is_open=True, muted=False, policy=POLICY, **common)
    assert not suspect("positive", 0.001, is_open=False, muted=True, policy=POLICY, **common)
    off = ConfirmPolicy(max_per_series=0)
    assert not suspect("positive", 0.001, is_open=False, muted=False, policy=off, **common)


def noise(rho: float, phi: float) -> Baseline:
    """A baseline whose runs 8 h apart correlate by rho, decaying by phi per 8 h."""
    return Baseline(
        level=0.0, time_of_day={}, weekend=0.0, scale={}, overall_scale=0.05, rho=rho, n=84,
        end=0.0, phi=phi, spacing_h=8.0,
    )  # fmt: skip


def test_it_spaces_confirmations_by_the_series_own_noise_in_hours() -> None:
    # Independent noise: a run is informative at once; the minimum spacing holds.
    assert informative_gap_hours(noise(0.0, 0.0), POLICY) == POLICY.min_spacing_hours
    assert informative_gap_hours(None, POLICY) == POLICY.min_spacing_hours
    # A drifting provider (ρ 0.72 at 8 h, decaying by 0.9 per 8 h): runs share w = ρ/φ of
    # the state at once, and it falls to the default 0.7 only after 8·ln(0.7/w)/ln 0.9 hours.
    drifting = noise(0.72, 0.9)
    needed = 8 * math.log(POLICY.decorrelated / (0.72 / 0.9)) / math.log(0.9)
    gap = informative_gap_hours(drifting, POLICY)
    assert needed <= gap < needed + 0.25 and gap > 8
    assert drifting.correlations(np.array([0.0, gap * HOUR]))[0, 1] <= POLICY.decorrelated
    # Asking for less correlation waits longer.
    stricter = ConfirmPolicy(decorrelated=0.3)
    assert informative_gap_hours(drifting, stricter) > gap


def test_it_spreads_a_suspicions_runs_evenly_before_the_schedules_next() -> None:
    # 2 h apart: three fit between runs 8 h apart; each is placed after the one before.
    assert place(0.0, 2.0, 8 * HOUR) == 2 * HOUR
    assert place(2 * HOUR, 2.0, 8 * HOUR) == 4 * HOUR
    assert place(6 * HOUR, 2.0, 8 * HOUR) is None  # the schedule's run is next
    # 3 h apart: one fits, midway, as far from both scheduled runs as it can be.
    assert place(0.0, 3.0, 8 * HOUR) == 4 * HOUR
    assert place(0.0, 5.0, 8 * HOUR) is None
    assert place(0.0, 5.0, None) == 5 * HOUR  # no scheduled run coming


def test_two_positives_inside_one_provider_episode_are_one_piece_of_evidence() -> None:
    config = DetectorConfig()  # open after 2, positives 6 h apart
    first, _ = advance(Streak(), Verdict.POSITIVE, config, at=0.0)
    # A confirmation 4 h later re-measures the same episode: held, not a second positive.
    inside, transition = advance(first, Verdict.POSITIVE, config, at=4 * HOUR)
    assert transition is None and inside.positives == 1 and inside.positive_at == 0.0
    # The schedule's run 8 h after the first (4 h after the confirmation) is new evidence.
    opened, transition = advance(inside, Verdict.POSITIVE, config, at=8 * HOUR)
    assert transition == Transition.OPEN
    # An episode later, to the minute, counts; a clear in between starts again.
    assert advance(first, Verdict.POSITIVE, config, at=6 * HOUR - 30)[1] == Transition.OPEN
    cleared, _ = advance(inside, Verdict.CLEAR, config, at=5 * HOUR)
    assert advance(cleared, Verdict.POSITIVE, config, at=6 * HOUR)[0].positives == 1


def test_a_confirmation_goes_where_its_positive_can_count() -> None:
    # After a positive at 0, one 4 h later could not count: it waits to 6 h (an episode later).
    assert place(0.0, 3.0, 8 * HOUR, counts_from=6 * HOUR) == 6 * HOUR
    # Not spent when it could count only as the schedule's run comes.
    assert place(0.0, 3.0, 8 * HOUR, counts_from=7.5 * HOUR) is None
    assert place(0.0, 3.0, None, counts_from=6 * HOUR) == 6 * HOUR
    # No positive to wait for (a suspect hold): spread evenly as before, but no later than an
    # episode before the schedule's next run when the spacing allows, so that a positive there
    # leaves the schedule's run free to be the second one.
    assert place(0.0, 3.0, 8 * HOUR, counts_from=None) == 4 * HOUR
    assert place(0.0, 3.0, 8 * HOUR, counts_from=None, episode_h=6.0) == 4 * HOUR  # 2 h < 3 h
    # Runs 10 h apart at a 4 h spacing: midway (5 h) would leave the next run 5 h after it;
    # 4 h leaves it an episode apart.
    assert place(0.0, 4.0, 10 * HOUR, counts_from=None) == 5 * HOUR
    assert place(0.0, 4.0, 10 * HOUR, counts_from=None, episode_h=6.0) == 4 * HOUR


def test_it_caps_confirmation_runs_by_series_and_by_month() -> None:
    assert budget_runs(3 * 30, POLICY) == 13  # 15 % of 90 runs a month
    base = {
        "newest": 0.0,
        "spacing_h": 2.0,
        "run_hours": 8.0,
        "used_by_series": 0,
        "pending": False,
        "used_this_month": 0,
        "scheduled_per_month": 90.0,
        "next_scheduled": 8 * HOUR,
        "healthy": True,
        "policy": POLICY,
    }
    assert decide(**base).at == 2 * HOUR
    assert decide(**base | {"used_by_series": 5}).at == 2 * HOUR
    assert decide(**base | {"used_by_series": POLICY.max_per_series}).at is None
    assert decide(**base | {"used_this_month": 13}).at is None
    assert decide(**base | {"pending": True}).at is None
    assert decide(**base | {"healthy": False}).at is None
    # an hourly schedule's next run is sooner than any confirmation
    assert decide(**base | {"next_scheduled": 1 * HOUR}).at is None
    assert decide(**base | {"run_hours": 1.0}).at is None
    # a drifting series' runs are informative only a day apart: none fits in 8 h
    assert decide(**base | {"spacing_h": 22.0}).at is None
    # after a positive, none that could count only as the schedule's run comes
    late = decide(**base | {"counts_from": 7.5 * HOUR})
    assert late.at is None and "could count" in late.why


# In the database


@pytest.fixture
def series(db):
    provider = Provider.objects.create(
        slug="acme", name="Acme", protocol="openai_chat", base_url="https://acme.example/v1"
    )
    endpoint = Endpoint.objects.create(provider=provider, slug="acme-llama", model="llama-3-70b")
    workload = Workload.objects.create(slug="w", name="Standard prompt")
    vantage = Vantage.objects.create(slug="eu", label="EU probe", queue="eu")
    Schedule.objects.all().delete()  # the default schedule (migration 0002): only this one
    schedule = Schedule.objects.create(
        name="3 a day", vantage=vantage, times_of_day=["02:00", "10:00", "18:00"]
    )
    schedule.workloads.set([workload])
    return {"endpoint": endpoint, "workload": workload, "vantage": vantage}


def history(series) -> None:
    store_history(
        **series,
        slots=daily_slots(end=T0, days=15),
        decode=lambda slot: DECODE,
        ttft=lambda slot: TTFT,
    )


def slow_run(series, hours: float, *, factor: float = 0.7, **kwargs) -> Run:
    [run] = store_history(
        **series,
        slots=[T0 + timedelta(hours=hours)],
        decode=lambda slot: DECODE * factor,
        ttft=lambda slot: TTFT,
        seed=int(hours),
        **kwargs,
    )
    return run


def evaluate(run: Run):
    with time_machine.travel(run.slot + timedelta(minutes=1), tick=False):
        return evaluate_after_run(run.id)


def confirmations(series) -> list[Run]:
    return list(Run.objects.filter(**series, origin=RunOrigin.CONFIRMATION).order_by("slot"))


def test_it_queues_one_confirmation_run_after_the_spacing(series, client, admin_user) -> None:
    history(series)
    suspect_run = slow_run(series, 8)  # 02:00, the first slow run
    outcome = evaluate(suspect_run)
    [queued] = confirmations(series)
    assert outcome.confirmation == queued.id
    # This history's noise is independent, so the minimum spacing (2 h) holds: the first of
    # the runs 2 h apart before the 10:00 run, 6 h before it (a positive there leaves the
    # 10:00 run free to be the second one).
    assert queued.slot == T0 + timedelta(hours=10)
    assert queued.status == RunStatus.QUEUED and queued.schedule is None
    assert queued.enqueued_at is None  # the tick claims it when its slot comes
    assert SeriesState.objects.get(**series, metric="decode_tps").confirmations == 1
    client.force_login(admin_user)
    page = client.get(f"/runs/{queued.id}/").content.decode()
    assert f"Confirmation of run #{suspect_run.id}" in page
    # Nothing is claimed before its slot; the tick's claim takes it once it is due.
    assert queued.id not in claim_and_enqueue(now=queued.slot - timedelta(minutes=1))
    assert queued.id in claim_and_enqueue(now=queued.slot)


def measure(queued: Run, *, factor: float = 0.7) -> Run:
    """The queued confirmation run, measured (stored as a finished run at its slot)."""
    series = {"endpoint": queued.endpoint, "workload": queued.workload, "vantage": queued.vantage}
    Run.objects.filter(id=queued.id).delete()
    [measured] = store_history(
        **series, slots=[queued.slot], decode=lambda s: DECODE * factor, ttft=lambda s: TTFT,
        seed=queued.slot.hour,
    )  # fmt: skip
    Run.objects.filter(id=measured.id).update(origin=RunOrigin.CONFIRMATION)
    return measured


def confirm_slow_run(series, *, factor: float) -> list[Run]:
    """A slow run at 02:00 (a hold: one slow run carries nothing yet), then its confirmation
    runs measured at `factor` of the usual speed until none is asked for; the runs measured."""
    first = evaluate(slow_run(series, 8))
    assert first.verdicts["decode_tps"].startswith("hold") and not first.opened
    measured = []
    while pending := [r for r in confirmations(series) if r.status == RunStatus.QUEUED]:
        measured.append(measure(pending[0], factor=factor))
        assert not evaluate(measured[-1]).opened
    return measured


def test_it_opens_on_confirmation_runs_and_names_them(series, client, admin_user, settings) -> None:
    settings.ALERTS_CONFIRM_MIN_SPACING_HOURS = 2  # three would fit before the 10:00 run
    history(series)
    measured = confirm_slow_run(series, factor=0.7)
    # 04:00 is the first positive; 06:00 and 08:00 would re-measure its episode (a positive
    # there could not count), so none is spent: the schedule's 10:00 run opens (without the
    # confirmation, 10:00 would be the first positive and 18:00 would open).
    assert [r.slot for r in measured] == [T0 + timedelta(hours=10)]
    # The detector reads it as an extra run: evidence that does not raise the bar for looks.
    history_read = load(measured[0], ["decode_tps"], DetectorConfig())["decode_tps"].history
    assert history_read.t[history_read.extra].tolist() == [measured[0].slot.timestamp()]
    outcome = evaluate(slow_run(series, 16))
    assert outcome.opened, outcome.verdicts
    alert = Alert.objects.get(metric="decode_tps")
    ids = [r.id for r in measured]
    assert alert.details["confirmed_by"] == ids
    client.force_login(admin_user)
    page = client.get(f"/alerts/{alert.id}/").content.decode()
    assert "Confirmed by" in page and f"run #{ids[0]}" in page


def test_a_dip_confirmed_inside_itself_opens_no_alert(series, settings) -> None:
    # The same runs as above, but the slowdown is a −40 % dip of a few hours, over by 10:00.
    settings.ALERTS_CONFIRM_MIN_SPACING_HOURS = 2
    history(series)
    measured = confirm_slow_run(series, factor=0.6)
    assert [r.slot for r in measured] == [T0 + timedelta(hours=10)]
    state = SeriesState.objects.get(**series, metric="decode_tps")
    assert state.positives == 1 and state.positive_at == T0 + timedelta(hours=10)
    evaluate(slow_run(series, 16, factor=1.0))
    assert not Alert.objects.exists()
    # Nor do the schedule's runs of the next two days, while the dip's runs stay in 72 h.
    for hours in range(24, 80, 8):
        evaluate(slow_run(series, hours, factor=1.0))
        assert not Alert.objects.exists(), f"opened at +{hours} h on the dip's runs"


def test_a_second_positive_must_be_seen_in_every_run_since_the_first(series) -> None:
    # Two days 30 % slower up to a positive that counted, then three runs as usual (a dip's
    # confirmation runs) and a newest run 8 % slower. The last day is still worse and the
    # newest run alone would read "seen again" and open; the runs since the positive do not.
    history(series)
    end = T0 + timedelta(hours=64)
    offsets = {h: 0.7 for h in (-56, -48, -40, -32, -24, -20, -16)} | {-12: 1.0, -8: 1.0, -4: 1.0}
    runs = store_history(
        **series,
        slots=[end + timedelta(hours=h) for h in offsets],
        decode=lambda slot: DECODE * offsets[round((slot - end) / timedelta(hours=1))],
        ttft=lambda slot: TTFT,
        seed=7,
    )
    SeriesState.objects.create(
        **series,
        metric="decode_tps",
        positives=1,
        positive_at=end - timedelta(hours=16),
        last_slot=runs[-1].slot,
    )
    outcome = evaluate(slow_run(series, 64, factor=0.92))
    assert not outcome.opened, outcome.verdicts
    assert "not seen again in the 4 runs since the last positive" in outcome.verdicts["decode_tps"]


def measure_pending(series, *, factor: float = 0.7) -> list[Run]:
    """Measure and evaluate the queued confirmation runs one after another, as each asks for
    the next; the runs measured."""
    measured = []
    while pending := [r for r in confirmations(series) if r.status == RunStatus.QUEUED]:
        measured.append(measure(pending[0], factor=factor))
        evaluate(measured[-1])
    return measured


def test_it_gives_a_suspicion_spaced_runs_up_to_its_cap(series, settings) -> None:
    settings.ALERTS_OPEN_AFTER = 20  # the positives stay short of opening: only the cap stops
    settings.ALERTS_EPISODE_HOURS = 0  # and each counts, however close
    settings.ALERTS_CONFIRM_MAX_PER_SERIES = 4
    settings.ALERTS_CONFIRM_MIN_SPACING_HOURS = 2
    history(series)
    evaluate(slow_run(series, 8))  # 02:00
    early = measure_pending(series)
    # Three runs 2 h apart fit before the schedule's 10:00 run; the last leaves it 2 h.
    assert [r.slot for r in early] == [T0 + timedelta(hours=h) for h in (10, 12, 14)]
    evaluate(slow_run(series, 16))  # the schedule's 10:00 run: still suspect
    late = measure_pending(series)
    assert [r.slot for r in late] == [T0 + timedelta(hours=18)]  # the 4th, then the cap
    state = SeriesState.objects.get(**series, metric="decode_tps")
    assert state.confirmations == 4 and not Alert.objects.exists()


def test_it_stops_when_the_evidence_says_not_worse(series) -> None:
    history(series)
    evaluate(slow_run(series, 8))  # 02:00: suspect
    [queued] = confirmations(series)
    outcome = evaluate(measure(queued, factor=1.0))  # 04:00 measures the usual speed
    assert outcome.verdicts["decode_tps"].startswith("clear"), outcome.verdicts
    assert len(confirmations(series)) == 1  # conclusive: no more
    assert SeriesState.objects.get(**series, metric="decode_tps").confirmations == 0


def test_it_stops_a_suspicion_when_the_months_budget_is_spent(series, settings) -> None:
    settings.ALERTS_OPEN_AFTER = 20
    settings.ALERTS_CONFIRM_BUDGET_SHARE = 0.025  # 2.5 % of 90 runs a month: 2
    settings.ALERTS_EPISODE_HOURS = 0
    settings.ALERTS_CONFIRM_MIN_SPACING_HOURS = 2
    history(series)
    evaluate(slow_run(series, 8))
    measured = measure_pending(series)
    assert [r.slot for r in measured] == [T0 + timedelta(hours=h) for h in (10, 12)]
    assert SeriesState.objects.get(**series, metric="decode_tps").confirmations == 2


def test_it_asks_at_most_the_cap_per_suspicion(series, settings) -> None:
    settings.ALERTS_CONFIRM_MAX_PER_SERIES = 1
    settings.ALERTS_OPEN_AFTER = 3  # two positives stay short of opening
    history(series)
    evaluate(slow_run(series, 8))
    Run.objects.filter(origin=RunOrigin.CONFIRMATION).update(status=RunStatus.SKIPPED)
    evaluate(slow_run(series, 16))  # suspect again, the cap of 1 used
    assert len(confirmations(series)) == 1


def test_it_keeps_to_the_months_budget(series, settings) -> None:
    settings.ALERTS_CONFIRM_BUDGET_SHARE = 0.01  # 1 % of 90 runs: none
    history(series)
    evaluate(slow_run(series, 8))
    assert confirmations(series) == []


def test_it_never_confirms_on_a_failing_or_disabled_endpoint(series) -> None:
    history(series)
    evaluate(slow_run(series, 8, errors=lambda slot: ["rate_limited"]))
    assert confirmations(series) == []
    Endpoint.objects.filter(id=series["endpoint"].id).update(enabled=False)
    evaluate(slow_run(series, 16))
    assert confirmations(series) == []


def test_it_shows_the_months_budget_in_dollars_on_the_alerts_page(series, client, admin_user):
    Endpoint.objects.filter(id=series["endpoint"].id).update(
        price_input_per_mtok=3, price_output_per_mtok=15
    )
    schedule = Schedule.objects.get()
    cost = monthly_cost(schedule).usd * Decimal("0.15")
    history(series)
    evaluate(slow_run(series, 8))  # one confirmation run queued (its slot is in the window)
    client.force_login(admin_user)
    with time_machine.travel(T0 + timedelta(hours=9), tick=False):
        page = client.get("/alerts/").content.decode()
    assert "Confirmation runs: 1 of at most 13 in the last 30 days" in page
    assert f"up to ${cost:,.2f} a month at list prices" in page and cost > 0
