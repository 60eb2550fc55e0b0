"""The run digest: the advice it gives is the advice the runs give, and it keeps up with runs."""

import json
from datetime import UTC, datetime, time, timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection, transaction

from advisor import tasks
from advisor.advice import advise
from advisor.batch import project_batch, stack
from advisor.digest import READ, digest_recent, load_digest, load_stacked, rebuild_days
from advisor.measures import FIELDS, OK, SLOT, load_columns, load_points
from advisor.models import DayDigest, RunDigest
from advisor.projection import project_all
from advisor.shape import Shape
from benchmarks.finish import finish_run
from benchmarks.models import Run, RunStatus, Vantage
from tests import advisor_data as seed
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options, queued_tasks
from tests.sqlite_script import run_on_sqlite

pytestmark = pytest.mark.django_db
SHAPES = {
    "chat": Shape(input_tokens=200, output_tokens=500, models=("llama-3.3-70b",)),
    "long": Shape(input_tokens=15_000, output_tokens=300, calls=3, tool_s=1.0, budget_s=30),
    "agents": Shape(input_tokens=200, output_tokens=200, calls=20, concurrency=10, budget_s=60),
}


def richer_world():
    """seed.world, plus long-context and 10-user runs with spreads, a run whose summary has no
    p90/p10, a failed run and a run outside the window, all digested."""
    profile, fast, cheap, lonely = seed.world()
    long, parallel = seed.data.workload("long-context"), seed.data.workload("parallel-10")
    for ep, ttft, decode in ((fast, 300, 250), (cheap, 900, 60), (lonely, 400, 150)):
        for i, slot in enumerate(seed.slots(8)):
            spread = {
                "ttft_ms": {"p50": ttft * 6 + i, "p90": ttft * 9, "n": 5},
                "decode_tps": {"p10": decode * 0.7, "p50": decode - i, "n": 5},
            }
            seed.data.run(ep, slot, wl=long, ttft_ms=ttft * 6 + i, decode_tps=decode - i,
                          input_tokens=30_150 + 10 * i, summary=spread)  # fmt: skip
            if ep is not lonely:
                seed.data.run(ep, slot, wl=parallel, ttft_ms=ttft * 2, decode_tps=decode / 3,
                              input_tokens=None, summary={})  # fmt: skip
        seed.data.run(ep, seed.NOW - timedelta(minutes=30), ok=0, errors=5)
        seed.data.run(ep, seed.NOW - timedelta(days=20), ttft_ms=1, decode_tps=9_999)
    call_command("advisor_digest")
    return profile


@pytest.mark.parametrize("name", SHAPES)
def test_it_gives_the_same_ranked_answer_from_the_digest_as_from_the_runs(name):
    richer_world()
    shape = SHAPES[name]
    stacked = advise(shape, now=seed.NOW).as_dict()  # the digest's days split by kind
    digest = advise(shape, now=seed.NOW, load=load_digest).as_dict()
    runs = advise(shape, now=seed.NOW, load=load_points).as_dict()
    assert [r["endpoint"] for r in digest["results"]]  # something is ranked
    assert digest == runs
    assert stacked == runs


@pytest.mark.parametrize("users", [1, 10])
def test_it_stacks_the_digests_days_as_the_runs_stack_whatever_the_window_cuts(users):
    """Each day's runs are split by kind and tallied once; a window adds up its days, and the
    days it cuts (its first, and its last when runs lie past `now`) are split as cut: what
    project_lean reads is what stacking the runs themselves gives, for any endpoints' order."""
    richer_world()
    vantage = Vantage.objects.get(is_default=True)
    ids = sorted(RunDigest.objects.values_list("endpoint_id", flat=True).distinct())
    for hours in (0, -5, -13, -30, 7, 26):  # ends cutting days at different hours
        now = seed.NOW + timedelta(hours=hours)
        for asked in (ids, ids[::-1], ids[1:], [ids[0], 10**9]):
            got = load_stacked(endpoint_ids=asked, vantage=vantage, now=now, days=3, users=users)
            runs = load_points(endpoint_ids=asked, vantage=vantage, now=now, days=3)
            empty = np.empty((0, len(FIELDS)))
            want = stack({e: runs.get(e, empty) for e in asked}, users=users)
            assert (got.ids, got.sizes) == (want.ids, want.sizes), hours
            for name in ("ok", "errors", "saturated", "newest"):
                np.testing.assert_array_equal(getattr(got, name), getattr(want, name), name)
            for name in ("base", "base_group", "long", "long_group", "parallel", "parallel_group"):
                np.testing.assert_array_equal(
                    getattr(got.kinds, name), getattr(want.kinds, name), f"{hours} h: {name}"
                )
            shape = SHAPES["agents" if users > 1 else "long"]
            assert project_batch(got, shape) == project_batch(want, shape)


def close(fast, reference, path="answer"):
    """The same answer, numbers within 1e-9 relative (the task quantiles are solved, not
    bisected), everything else equal."""
    if isinstance(reference, dict):
        assert list(fast) == list(reference), path
        for key in reference:
            close(fast[key], reference[key], f"{path}.{key}")
    elif isinstance(reference, list):
        assert len(fast) == len(reference), path
        for i, (a, b) in enumerate(zip(fast, reference, strict=True)):
            close(a, b, f"{path}[{i}]")
    elif isinstance(reference, float):
        assert fast == pytest.approx(reference, rel=1e-9), path
    else:
        assert fast == reference, path


def test_it_reads_the_digest_unsorted_by_the_database_and_in_order_all_the_same():
    """Sorting a cold advice's digest rows in PostgreSQL carried every points value through the
    sort: past work_mem at ~300 endpoints it spilled to disk, most of the read's time. The rows
    come back in whatever order; the endpoints' points are still oldest first."""
    richer_world()
    first = (seed.NOW - timedelta(days=15)).astimezone(UTC).date()
    day = seed.NOW.astimezone(UTC).date()
    while day >= first:  # newest day written first: the table's order is not the read's
        rebuild_days(day, day + timedelta(days=1))
        day -= timedelta(days=1)
    vantage = Vantage.objects.get(is_default=True)
    ids = sorted(RunDigest.objects.values_list("endpoint_id", flat=True).distinct())
    params = {"vantage": vantage.id, "first": first, "last": seed.NOW.date(), "known": []}
    # The plan of a large digest: no index gives its rows in (endpoint, day) order.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute(f"EXPLAIN {READ}", params)
        plan = "\n".join(line for (line,) in cursor.fetchall())
    assert "Sort" not in plan
    digest = load_digest(endpoint_ids=ids, vantage=vantage, now=seed.NOW, days=14)
    runs = load_points(endpoint_ids=ids, vantage=vantage, now=seed.NOW, days=14)
    assert sorted(digest) == sorted(runs) == ids
    for endpoint_id in ids:
        np.testing.assert_array_equal(digest[endpoint_id], runs[endpoint_id])


@pytest.mark.parametrize("name", SHAPES)
def test_it_gives_the_same_ranked_answer_on_the_fast_path_as_one_endpoint_at_a_time(name):
    richer_world()
    shape = SHAPES[name]
    fast = advise(shape, now=seed.NOW).as_dict()
    reference = advise(shape, now=seed.NOW, load=load_points, project=project_all).as_dict()
    assert [r["endpoint"] for r in fast["results"]]  # something is ranked
    assert fast["recommended"] == reference["recommended"]
    assert fast["reason"] == reference["reason"]
    assert [(r["endpoint"], r["rank"], r["tie"]) for r in fast["results"]] == [
        (r["endpoint"], r["rank"], r["tie"]) for r in reference["results"]
    ]
    close(fast, reference)


def test_it_digests_a_run_once_it_finishes(django_capture_on_commit_callbacks, tmp_path):
    seed.world()
    fast = Run.objects.filter(endpoint__slug="fast").first()
    run = Run.objects.create(endpoint=fast.endpoint, workload=fast.workload,
                             vantage=fast.vantage, slot=seed.NOW - timedelta(minutes=20),
                             status=RunStatus.RUNNING)  # fmt: skip
    before = advise(SHAPES["chat"], now=seed.NOW).as_dict()["basis"]["runs"]
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):
        with django_capture_on_commit_callbacks(execute=True):
            assert finish_run(run)
        asked = [t for t in queued_tasks(tmp_path) if t["task"] == "advisor.digest_run"]
    assert asked == [{"queue": "tokspeed", "task": "advisor.digest_run", "args": [run.id]}]
    tasks.digest_run(run.id)
    assert advise(SHAPES["chat"], now=seed.NOW).as_dict()["basis"]["runs"] == before + 1


def test_it_catches_up_recent_runs_whose_message_was_lost():
    seed.world()
    fast = Run.objects.filter(endpoint__slug="fast").first().endpoint
    seed.data.run(fast, seed.NOW - timedelta(minutes=40), ttft_ms=5000, decode_tps=10)
    stale = advise(SHAPES["chat"], now=seed.NOW).as_dict()
    digest_recent(now=seed.NOW)  # what the hourly advisor.digest_recent does at NOW
    fresh = advise(SHAPES["chat"], now=seed.NOW).as_dict()
    assert fresh["basis"]["runs"] == stale["basis"]["runs"] + 1
    assert fresh == advise(SHAPES["chat"], now=seed.NOW, load=load_points).as_dict()


def test_it_rebuilds_from_the_runs_by_command_and_drops_days_without_runs():
    seed.world()
    answer = advise(SHAPES["chat"], now=seed.NOW).as_dict()
    lonely_days = RunDigest.objects.filter(endpoint__slug="lonely").count()
    Run.objects.filter(endpoint__slug="lonely").delete()
    RunDigest.objects.filter(endpoint__slug="fast").delete()
    call_command("advisor_digest")
    assert lonely_days and not RunDigest.objects.filter(endpoint__slug="lonely").exists()
    rebuilt = advise(SHAPES["chat"], now=seed.NOW).as_dict()
    assert [r["endpoint"] for r in rebuilt["results"]] == [
        r["endpoint"] for r in answer["results"] if r["endpoint"] != "lonely"
    ]


# The same richer world seeded into the SQLite database `make run` uses, digested by the command
# there, its rows printed as JSON (a subprocess: this test session's database is PostgreSQL).
_SQLITE_SCRIPT = """
import json, django
django.setup()
from django.core.management import call_command
from django.db import connection, transaction
call_command("migrate", verbosity=0)
from advisor.models import DayDigest, RunDigest
from tests.advisor.test_advisor_digest import digest_rows, richer_world
richer_world()
RunDigest.objects.all().delete()
call_command("advisor_digest")
print("ROWS " + json.dumps(digest_rows()))
"""


def digest_rows() -> list[list]:
    """Every digest row by slugs and day, its packed records in hex."""
    rows = RunDigest.objects.select_related("vantage", "endpoint").order_by(
        "vantage__slug", "endpoint__slug", "day"
    )
    return [
        [
            row.vantage.slug,
            row.endpoint.slug,
            row.day.isoformat(),
            row.runs,
            bytes(row.points).hex(),
        ]
        for row in rows
    ]


@pytest.mark.slow
def test_it_writes_the_same_digest_rows_on_sqlite_as_on_postgresql(tmp_path):
    richer_world()
    on_postgresql = digest_rows()
    done = run_on_sqlite(_SQLITE_SCRIPT, tmp_path)
    printed = next(line for line in done.stdout.splitlines() if line.startswith("ROWS "))
    on_sqlite = json.loads(printed.removeprefix("ROWS "))
    assert on_postgresql, "the seeded runs made no digest rows on PostgreSQL"
    assert len(on_sqlite) == len(on_postgresql), (len(on_sqlite), len(on_postgresql))
    assert on_sqlite == on_postgresql, "SQLite's digest rows differ from PostgreSQL's"


def test_it_keeps_each_endpoints_runs_inside_the_window_and_drops_an_endpoint_outside_it():
    """load_columns (both reads split by it): rows grouped by endpoint, oldest first; each
    endpoint keeps exactly its runs with start ≤ slot ≤ now, one left with none is absent."""
    start, now = seed.NOW - timedelta(days=14), seed.NOW
    day = 86_400
    slots = {
        1: [start.timestamp() - day, start.timestamp(), now.timestamp() - 1, now.timestamp()],
        2: [start.timestamp() - 2 * day, start.timestamp() - 1],  # all before the window
        3: [start.timestamp() + day, now.timestamp() + 1, now.timestamp() + day],
        4: [now.timestamp() + 5],  # all after it
    }
    owner = np.repeat(list(slots), [len(s) for s in slots.values()])
    records = np.zeros((len(owner), len(FIELDS)))
    records[:, SLOT] = np.concatenate([s for s in slots.values()])
    records[:, OK] = np.arange(len(owner))  # which row is which
    split = load_columns(owner, records, start=start, now=now)
    assert list(split) == [1, 3]
    assert split[1][:, OK].tolist() == [1, 2, 3]
    assert split[3][:, OK].tolist() == [6]
    assert load_columns(np.empty(0, int), np.empty((0, len(FIELDS))), start=start, now=now) == {}


def window_points(ids: list[int], vantage: Vantage) -> tuple[dict, dict]:
    """(the digest's, the runs') points of the endpoints in the advice's window at NOW."""
    digest = load_digest(endpoint_ids=ids, vantage=vantage, now=seed.NOW, days=14)
    return digest, load_points(endpoint_ids=ids, vantage=vantage, now=seed.NOW, days=14)


def assert_same_points(digest: dict, runs: dict) -> None:
    assert list(digest) == list(runs)
    for endpoint_id in runs:
        np.testing.assert_array_equal(digest[endpoint_id], runs[endpoint_id])


def test_it_reads_the_window_as_one_row_per_day_from_the_day_digest():
    """A cold advice over hundreds of endpoints read one digest row per endpoint and day (6,000
    at 400 endpoints): a row cost the database and the client more than its bytes. Each day's
    endpoints are joined into one DayDigest row, which is what the advice reads."""
    richer_world()
    vantage = Vantage.objects.get(is_default=True)
    days = set(RunDigest.objects.values_list("day", flat=True))
    assert set(DayDigest.objects.values_list("day", flat=True)) == days
    assert DayDigest.objects.count() == len(days) < RunDigest.objects.count()
    ids = sorted(RunDigest.objects.values_list("endpoint_id", flat=True).distinct())
    assert_same_points(*window_points(ids, vantage))
    assert_same_points(*window_points(ids[1:], vantage))  # some endpoints of each day only
    DayDigest.objects.all().delete()
    assert load_digest(endpoint_ids=ids, vantage=vantage, now=seed.NOW, days=14) == {}


def test_it_joins_a_day_again_when_one_endpoints_day_is_rebuilt_and_keeps_the_others():
    profile, fast, cheap, lonely = seed.world()
    vantage = Vantage.objects.get(is_default=True)
    newest = Run.objects.filter(endpoint=fast).latest("slot")
    run = seed.data.run(fast, newest.slot + timedelta(minutes=30), ttft_ms=5000, decode_tps=10)
    ids = [fast.id, cheap.id, lonely.id]
    digest, runs = window_points(ids, vantage)
    assert len(digest[fast.id]) == len(runs[fast.id]) - 1  # not digested yet
    tasks.digest_run(run.id)  # that endpoint's day only
    assert_same_points(*window_points(ids, vantage))
    day = run.slot.astimezone(UTC).date()
    midnight = datetime.combine(day, time(), tzinfo=UTC)
    Run.objects.filter(slot__gte=midnight, slot__lt=midnight + timedelta(days=1)).delete()
    for endpoint in (fast, cheap, lonely):  # each endpoint's day rebuilt alone, as digest_run does
        assert DayDigest.objects.filter(day=day).exists()
        rebuild_days(day, day + timedelta(days=1), endpoint_id=endpoint.id, vantage_id=vantage.id)
        assert_same_points(*window_points([endpoint.id], vantage))
    assert not DayDigest.objects.filter(day=day).exists()  # its last endpoint left: so did the day
    assert_same_points(*window_points(ids, vantage))
