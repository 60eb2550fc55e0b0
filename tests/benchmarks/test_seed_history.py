"""seed_history: synthetic history, labelled as such, consistent and shaped like real runs."""

from datetime import UTC, datetime, timedelta
from importlib import import_module
from io import StringIO

import numpy as np
import pytest
from django.apps import apps as django_apps
from django.core.management import CommandError, call_command

from benchmarks.models import Run, RunStatus, Sample, Workload
from benchmarks.stats import median, summarize
from benchmarks.synthetic import slot_times
from benchmarks.synthetic.generate import WorkloadSpec, generate
from benchmarks.synthetic.profiles import Profile
from providers.models import Provider

pytestmark = pytest.mark.django_db

SIZE = {"endpoints": 3, "days": 4, "workloads": 4, "slots": 3, "samples_per_run": 5}


def seed(**options) -> str:
    out = StringIO()
    call_command("seed_history", **(SIZE | options), stdout=out)
    return out.getvalue()


def test_it_seeds_every_slot_of_every_endpoint_and_workload():
    output = seed()
    expected_runs = SIZE["endpoints"] * SIZE["workloads"] * SIZE["days"] * SIZE["slots"]
    assert Run.objects.count() == expected_runs
    assert Sample.objects.count() == expected_runs * SIZE["samples_per_run"]
    assert "SYNTHETIC" in output
    per_series = Run.objects.values("endpoint", "workload").distinct().count()
    assert per_series == SIZE["endpoints"] * SIZE["workloads"]
    assert set(Run.objects.values_list("workload__slug", flat=True)) == set(
        Workload.objects.values_list("slug", flat=True)
    )


def test_it_labels_everything_as_synthetic():
    seed()
    providers = Provider.objects.all()
    assert providers.count() == SIZE["endpoints"]
    for provider in providers:
        assert provider.simulated and provider.name.startswith("Synthetic")
        assert not provider.enabled  # no schedule will ever send it a request
        assert provider.base_url.startswith("http://synthetic.invalid")
    assert set(Run.objects.values_list("client_version", flat=True)) == {"synthetic"}
    errors = Sample.objects.exclude(error_category="")
    assert all("Synthetic" in message for message in errors.values_list("error_message", flat=True))


def test_it_writes_the_summary_that_summarize_would_write():
    seed(endpoints=2, days=3)
    compared = 0
    for run in Run.objects.prefetch_related("samples"):
        samples = sorted(run.samples.all(), key=lambda s: s.index)
        truth = summarize(samples, concurrency=run.concurrency)
        for key in ("samples", "ok", "errors", "errors_by_category", "outcomes"):
            assert run.summary[key] == truth[key], key
        for metric in ("ttft_ms", "ttfa_ms", "decode_tps", "total_ms", "e2e_ms", "itl_p99_ms"):
            if metric in truth:
                assert run.summary[metric] == pytest.approx(truth[metric]), metric
        assert run.ok_count == truth["ok"] and run.error_count == truth["errors"]
        assert run.ttft_p50_ms == pytest.approx(median(truth, "ttft_ms"))
        assert run.decode_tps_p50 == pytest.approx(median(truth, "decode_tps"))
        assert run.e2e_p50_ms == pytest.approx(median(truth, "total_ms"))
        expected_status = (
            RunStatus.FAILED if truth["ok"] == 0 else
            RunStatus.PARTIAL if truth["errors"] else RunStatus.DONE
        )  # fmt: skip
        assert run.status == expected_status
        compared += 1
    assert compared == 2 * 4 * 3 * 3


def test_it_writes_samples_that_obey_the_metric_definitions():
    seed(endpoints=2, days=2)
    ok = Sample.objects.filter(error_category="")
    assert ok.exists()
    for s in ok:
        # Stored to the microsecond and 0.001 tokens/s, like a measurement.
        decode = (s.output_tokens - 1) / ((s.last_token_ms - s.ttft_ms) / 1000)
        assert s.decode_tps == pytest.approx(decode, abs=1e-3)
        assert s.ttfb_ms <= s.first_event_ms <= s.ttft_ms <= s.ttfa_ms
        assert s.ttft_ms < s.last_token_ms < s.total_ms
        tpot = (s.last_token_ms - s.ttft_ms) / (s.output_tokens - 1)
        assert s.tpot_ms == pytest.approx(tpot, abs=1e-3)
        assert s.tokens_source == "usage" and s.http_status == 200
    for s in Sample.objects.exclude(error_category=""):
        assert s.decode_tps is None and s.output_tokens is None


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_seeds_endpoints_in_parallel_worker_processes():
    # An earlier transactional test may have flushed the default workloads: put them back.
    # (serialized_rollback cannot mix with the flushes of other transactional tests.)
    defaults = import_module("benchmarks.migrations.0002_default_workloads")
    defaults.create_defaults(django_apps, None)
    output = seed(endpoints=3, days=2, jobs=2)
    assert "SYNTHETIC" in output
    assert Run.objects.count() == 3 * SIZE["workloads"] * 2 * SIZE["slots"]
    per_endpoint = Run.objects.values("endpoint").distinct().count()
    assert per_endpoint == 3
    assert Sample.objects.count() == Run.objects.count() * SIZE["samples_per_run"]


def test_it_refuses_to_seed_twice_unless_told_to_replace():
    seed()
    runs = Run.objects.count()
    with pytest.raises(CommandError, match="--replace"):
        seed()
    seed(replace=True, seed=7)
    assert Run.objects.count() == runs


def test_it_names_a_workload_count_it_cannot_meet():
    with pytest.raises(CommandError, match="workloads"):
        seed(workloads=Workload.objects.count() + 1)


def test_it_spreads_slots_evenly_and_ends_before_now():
    now = datetime(2026, 3, 10, 12, 30, tzinfo=UTC)
    slots = slot_times(days=2, per_day=3, now=now)
    assert len(slots) == 6 and slots[-1] == now.replace(hour=10, minute=0)
    assert {s.hour for s in slots} == {2, 10, 18}
    assert all(b - a == timedelta(hours=8) for a, b in zip(slots, slots[1:], strict=False))


PROFILE = Profile(
    ttft_ms=400.0, decode_tps=100.0, prefill_tps=10_000.0, peak_hour=18.0,
    peak_decode_loss=0.3, peak_ttft_gain=0.5, batching=0.3, error_rate=0.02, outage_rate=0.0,
    tokens_per_chunk=1.0, reasoning=False, slowdowns=((40.0, 60.0, 0.5),),
)  # fmt: skip


def _generated(profile: Profile = PROFILE, *, concurrency: int = 1, context: int = 0):
    start = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday
    hours = [start + timedelta(days=d, hours=h) for d in range(100) for h in (6, 18)]
    spec = WorkloadSpec(1, context, concurrency, 5, 2048, 100 + context)
    seconds = np.array([h.timestamp() for h in hours])
    batch = generate(
        profile, slots=seconds, workloads=[spec], samples_per_run=5,
        first_day=float(seconds[0]), rng=np.random.default_rng(3),
    )  # fmt: skip
    ok = batch.samples["error"] < 0
    hour = np.repeat([h.hour for h in hours], 5)
    day = np.repeat([(h - start).days for h in hours], 5)
    return batch, ok, hour, day


def test_it_makes_peak_hours_slower_by_the_profiles_share():
    batch, ok, hour, day = _generated()
    normal = ok & ((day < 40) | (day >= 60))
    weekday = (day % 7) < 5
    decode = batch.samples["decode_tps"]
    peak = np.median(decode[normal & weekday & (hour == 18)])
    quiet = np.median(decode[normal & weekday & (hour == 6)])
    quiet_load = 0.5 * (1 + np.cos(2 * np.pi * (6 - PROFILE.peak_hour) / 24))
    expected = (1 - PROFILE.peak_decode_loss) / (1 - PROFILE.peak_decode_loss * quiet_load)
    assert peak / quiet == pytest.approx(expected, rel=0.05)


def test_it_slows_an_endpoint_down_inside_its_slowdown_window():
    batch, ok, hour, day = _generated()
    decode = batch.samples["decode_tps"]
    inside = np.median(decode[ok & (day >= 40) & (day < 60) & (hour == 6)])
    before = np.median(decode[ok & (day >= 20) & (day < 40) & (hour == 6)])
    assert inside / before == pytest.approx(PROFILE.slowdowns[0][2], rel=0.1)


def test_it_lowers_per_user_speed_with_concurrency_and_adds_prefill_with_context():
    base, ok, _, _ = _generated()
    busy, busy_ok, _, _ = _generated(concurrency=16)
    ratio = np.median(busy.samples["decode_tps"][busy_ok]) / np.median(
        base.samples["decode_tps"][ok]
    )
    assert ratio == pytest.approx(16 ** (-PROFILE.batching), rel=0.1)
    long, long_ok, _, _ = _generated(context=30_000)
    added = np.median(long.samples["ttft_ms"][long_ok]) - np.median(base.samples["ttft_ms"][ok])
    assert added == pytest.approx(30_000 / PROFILE.prefill_tps * 1000, rel=0.25)


def test_it_fails_about_as_many_requests_as_the_profile_says():
    batch, ok, _, _ = _generated()
    load = batch.runs["load"]
    expected = np.mean(PROFILE.error_rate * (1 + 2 * load))
    assert (~ok).mean() == pytest.approx(expected, rel=0.35)
