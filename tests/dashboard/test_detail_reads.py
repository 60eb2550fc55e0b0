"""The endpoint and compare pages' reads over a long window: the answers of the ORM reads
they replaced, from fewer queries (a window's rollup rows read by written-out SQL, the context
pairs' series read for their TTFT only, the compare picker in one query)."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db.models import Q

from benchmarks.buckets import BUCKETS
from benchmarks.models import RunRollup, WindowRollup
from benchmarks.rollups import read
from benchmarks.selectors import days
from benchmarks.selectors.scope import Workloads, resolve_vantage
from benchmarks.synthetic import seed_history
from dashboard.compare_picker import picker_groups
from providers.models import Endpoint
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

# 23:00 UTC: today's three slots have run, so a long window merges today's day rows too.
LATE = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)


@pytest.fixture
def history():
    with time_machine.travel(LATE, tick=False):
        seed_history(endpoints=3, days=100, workloads=4, slots=3, samples_per_run=1, now=LATE)
        yield


def _orm_rows(vantage, hours, *, tod_bucket, endpoint_ids, workload_ids, buckets) -> list:
    """What rollup_rows read through the ORM: the window rows through yesterday (their near
    sketches) and today's day rows, in scope; as sorted (fields..., sketch bytes)."""
    scope = Q(vantage=vantage, workload_id__in=workload_ids)
    if endpoint_ids is not None:
        scope &= Q(endpoint_id__in=endpoint_ids)
    if tod_bucket is not None:
        window_buckets = [tod_bucket]
    else:
        window_buckets = list(BUCKETS) if buckets else [WindowRollup.ALL_BUCKETS]
    windows = WindowRollup.objects.filter(
        scope,
        days=hours // 24,
        through_day=LATE.date() - timedelta(days=1),
        tod_bucket__in=window_buckets,
    ).values_list(*read._FIELDS, "near")
    bucket = Q() if tod_bucket is None else Q(tod_bucket=tod_bucket)
    today = RunRollup.objects.filter(scope, bucket, span="day", day=LATE.date())
    found = [*windows, *today.values_list(*read._FIELDS, "packed")]
    return sorted((*values[:-1], bytes(values[-1])) for values in found)


@pytest.mark.parametrize("hours", [30 * 24, 90 * 24, 365 * 24])
def test_a_windows_rollup_rows_are_the_window_rows_and_todays_rows_in_scope(history, hours):
    with time_machine.travel(LATE, tick=False):
        vantage = resolve_vantage(None)
        workloads = Workloads.load()
        ids = list(Endpoint.objects.order_by("id").values_list("id", flat=True))
        every = [w.id for w in workloads.items]
        cases = [
            {"tod_bucket": None, "endpoint_ids": None, "workload_ids": every, "buckets": False},
            {"tod_bucket": None, "endpoint_ids": ids[:2], "workload_ids": every[:2]},
            {"tod_bucket": None, "endpoint_ids": ids[1:2], "workload_ids": every[:1]},
            {"tod_bucket": None, "endpoint_ids": ids, "workload_ids": every[:1], "buckets": True},
            {"tod_bucket": 1, "endpoint_ids": None, "workload_ids": every},
            {"tod_bucket": None, "endpoint_ids": [], "workload_ids": every},
        ]
        for case in cases:
            case.setdefault("buckets", False)
            rows = read.rollup_rows(vantage=vantage, window_hours=hours, **case)
            got = sorted((*(row[f] for f in read._FIELDS), row["bins"].tobytes()) for row in rows)
            assert got == _orm_rows(vantage, hours, **case), case
            assert all(row["margin"] >= 0 for row in rows if "window_id" in row)
            assert bool(rows) == bool(case["endpoint_ids"] is None or case["endpoint_ids"])


def test_the_context_pairs_read_the_ttft_the_whole_series_has(history):
    with time_machine.travel(LATE, tick=False):
        vantage = resolve_vantage(None)
        workloads = Workloads.load()
        base, long = workloads.base().id, workloads.long().id
        ids = list(Endpoint.objects.values_list("id", flat=True))
        scope = {"vantage": vantage, "window_hours": 365 * 24}
        whole = days.day_series(ids, [base, long], **scope)
        light = days.day_series(ids, [base, long], ttft_only={long}, **scope)
    assert all(whole.values())
    for key, points in whole.items():
        if key[1] == long:
            kept = [{"slot": p["slot"], "day": p["day"], "ttft_ms": p["ttft_ms"]} for p in points]
            assert light[key] == kept
        else:
            assert light[key] == points


def test_the_picker_is_read_in_one_query_and_an_archived_name_still_names_a_family(
    django_assert_num_queries,
):
    old = data.endpoint(
        data.provider("old"), "old-one", display_name="Llama 3.3 70B via Old", model="llama-70b"
    )
    old.archived_at = datetime(2026, 1, 1, tzinfo=UTC)
    old.save()
    data.endpoint(data.provider("new"), "new-one", display_name="", model="llama-70b")
    data.endpoint(data.provider("other"), "other-one", display_name="Other")
    data.endpoint(data.provider("more"), "more-one", display_name="Other (simulated)")
    with django_assert_num_queries(1):
        groups = picker_groups()
    assert [(family, [c.slug for c in choices]) for family, choices in groups] == [
        ("Other", ["more-one", "other-one"]),
        ("Llama 3.3 70B", ["new-one"]),
    ]
