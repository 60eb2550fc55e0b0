"""REST API: runs (filters, order, pages), a run's samples, and triggering a run."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone
from kombu import Connection

from benchmarks.models import Run, RunStatus, Sample
from tests.api_factories import (
    hours_ago,
    make_endpoint,
    make_provider,
    make_run,
    make_sample,
    token_client,
    vantage,
    workload,
)
from tokspeed.celery import app as celery_app

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]

# Every metric of docs/design.md §4 a sample carries, plus e2e_ms.
SECTION_4 = {
    "connect_ms", "ttfb_ms", "first_event_ms", "ttft_ms", "ttfa_ms", "last_token_ms", "total_ms",
    "output_tokens", "tokens_source", "reasoning_tokens", "decode_tps", "tpot_ms", "itl_p50_ms",
    "itl_p90_ms", "itl_p99_ms", "itl_max_ms", "chunks", "tokens_per_chunk", "e2e_ms",
}  # fmt: skip


@pytest.fixture
def two_endpoints():
    acme = make_provider("acme")
    other = make_provider("other", simulated=True)
    return make_endpoint(acme, "acme-fast"), make_endpoint(other, "other-slow")


def ids(response) -> list[int]:
    assert response.status_code == 200, response.json()
    return [item["id"] for item in response.json()["results"]]


def test_it_lists_runs_newest_first(reader, two_endpoints):
    fast, slow = two_endpoints
    runs = [make_run(fast, hours_ago(h)) for h in (30, 2, 10)]
    newest_first = sorted(runs, key=lambda r: r.slot, reverse=True)
    assert ids(reader.get("/api/v1/runs/")) == [r.id for r in newest_first]


def test_it_filters_runs_by_endpoint_provider_workload_vantage_and_status(reader, two_endpoints):
    fast, slow = two_endpoints
    base = make_run(fast, hours_ago(1))
    long = make_run(fast, hours_ago(2), wl=workload("long-context"))
    other = make_run(slow, hours_ago(3), status=RunStatus.FAILED, ok=0, errors=5)
    assert ids(reader.get("/api/v1/runs/", {"endpoint": "acme-fast"})) == [base.id, long.id]
    assert ids(reader.get("/api/v1/runs/", {"provider": "other"})) == [other.id]
    assert ids(reader.get("/api/v1/runs/", {"workload": "long-context"})) == [long.id]
    assert ids(reader.get("/api/v1/runs/", {"status": "failed"})) == [other.id]
    assert len(ids(reader.get("/api/v1/runs/", {"vantage": "local"}))) == 3
    item = reader.get("/api/v1/runs/", {"provider": "other"}).json()["results"][0]
    assert item["simulated"] is True and item["endpoint"] == "other-slow"


def test_it_filters_runs_by_time_range(reader, two_endpoints):
    fast, _ = two_endpoints
    old, middle, new = (make_run(fast, hours_ago(h)) for h in (48, 24, 1))
    since = (middle.slot - timedelta(minutes=1)).isoformat()
    until = (new.slot - timedelta(minutes=1)).isoformat()
    assert ids(reader.get("/api/v1/runs/", {"since": since})) == [new.id, middle.id]
    assert ids(reader.get("/api/v1/runs/", {"until": until})) == [middle.id, old.id]
    assert ids(reader.get("/api/v1/runs/", {"since": since, "until": until})) == [middle.id]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-40T00:00"}, "until"),
        ({"since": "2026-02-01T00:00Z", "until": "2026-01-01T00:00Z"}, "until"),
        ({"endpoint": "no-such-endpoint"}, "endpoint"),
        ({"workload": "nope"}, "workload"),
        ({"vantage": "nope"}, "vantage"),
        ({"status": "exploded"}, "status"),
        ({"endpont": "acme-fast"}, "endpont"),
        ({"endpoint": "acme\x00"}, "endpoint"),
    ],
)
def test_it_answers_400_naming_the_bad_parameter(reader, two_endpoints, params, field):
    response = reader.get("/api/v1/runs/", params)
    assert response.status_code == 400
    assert field in response.json()


def test_it_pages_runs_by_cursor_and_back(reader, two_endpoints):
    fast, slow = two_endpoints
    # Two runs share each slot: the cursor orders ties by id, so none is skipped or repeated.
    runs = [make_run(e, hours_ago(h)) for h in range(1, 4) for e in (fast, slow)]
    expected = [r.id for r in sorted(runs, key=lambda r: (r.slot, r.id), reverse=True)]
    first = reader.get("/api/v1/runs/", {"page_size": 4}).json()
    assert [r["id"] for r in first["results"]] == expected[:4]
    assert first["previous"] is None and "cursor=" in first["next"]
    second = reader.get(first["next"]).json()
    assert [r["id"] for r in second["results"]] == expected[4:]
    assert second["next"] is None
    back = reader.get(second["previous"]).json()
    assert [r["id"] for r in back["results"]] == expected[:4]
    assert back["previous"] is None


def test_it_keeps_a_cursor_valid_while_new_runs_arrive(reader, two_endpoints):
    fast, _ = two_endpoints
    runs = [make_run(fast, hours_ago(h)) for h in range(1, 6)]
    first = reader.get("/api/v1/runs/", {"page_size": 2}).json()
    make_run(fast, hours_ago(0))  # arrives at the top while the reader is on page 1
    second = reader.get(first["next"]).json()
    assert [r["id"] for r in second["results"]] == [runs[2].id, runs[3].id]
    assert "page_size=2" in second["next"]


@pytest.mark.parametrize("cursor", ["nonsense", "bnwyMDI2LTAxLTAxfDE", "\x00"])
def test_it_answers_400_for_a_cursor_it_did_not_give(reader, two_endpoints, cursor):
    response = reader.get("/api/v1/runs/", {"cursor": cursor})
    assert response.status_code == 400
    assert "cursor" in response.json()


def test_it_refuses_the_old_page_number_on_the_runs_list(reader, two_endpoints):
    response = reader.get("/api/v1/runs/", {"page": 2})
    assert response.status_code == 400 and "page" in response.json()


def test_it_shows_a_run_with_its_summary(reader, two_endpoints):
    run = make_run(two_endpoints[0], hours_ago(1), ttft_ms=321.0, decode_tps=77.0)
    body = reader.get(f"/api/v1/runs/{run.id}/").json()
    assert body["ttft_p50_ms"] == 321.0 and body["decode_tps_p50"] == 77.0
    assert body["summary"] == run.summary
    assert body["workload"] == "base" and body["vantage"] == "local"


def test_it_lists_a_runs_samples_with_every_metric(reader, two_endpoints):
    run = make_run(two_endpoints[0], hours_ago(1))
    made = [make_sample(run, i, ttft_ms=300.0 + i, decode_tps=90.0) for i in range(3)]
    made.append(make_sample(run, 3, error_category="rate_limited", http_status=429))
    response = reader.get(f"/api/v1/runs/{run.id}/samples/")
    assert response.status_code == 200
    items = response.json()["results"]
    assert [item["index"] for item in items] == [0, 1, 2, 3]
    assert SECTION_4 <= set(items[0])
    for item, sample in zip(items, made, strict=True):
        assert item["ttft_ms"] == sample.ttft_ms
        assert item["e2e_ms"] == sample.total_ms
        assert item["ok"] is (not sample.error_category)
    assert items[3]["error_category"] == "rate_limited" and items[3]["http_status"] == 429


def test_it_answers_404_for_missing_runs(reader):
    assert reader.get("/api/v1/runs/424242/").status_code == 404
    assert reader.get("/api/v1/runs/424242/samples/").status_code == 404
    assert reader.get("/api/v1/runs/99999999999999999999999999/").status_code == 404
    assert reader.get("/api/v1/runs/abc/").status_code == 404


@pytest.fixture
def memory_broker():
    """Publish to kombu's in-process memory transport, so a test can read what was sent."""
    saved = celery_app.conf.broker_url
    celery_app.conf.broker_url = "memory://"
    # Drop connections cached for the previous broker (what Celery does after a fork).
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    yield
    celery_app.conf.broker_url = saved
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


def published(queue: str) -> list:
    """Messages waiting on a queue of the memory broker (consumed)."""
    messages = []
    with Connection("memory://") as connection:
        simple = connection.SimpleQueue(queue)
        while True:
            try:
                messages.append(simple.get(timeout=0.2))
            except simple.Empty:
                break
        simple.close()
    return messages


@pytest.mark.usefixtures("memory_broker")
def test_it_triggers_a_run_and_queues_it_on_the_vantages_queue(
    staff, two_endpoints, django_capture_on_commit_callbacks
):
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(
            "/api/v1/runs/", {"endpoint": "acme-fast", "workload": "parallel-10"}, format="json"
        )
    assert response.status_code == 202, response.json()
    body = response.json()
    run = Run.objects.get(pk=body["id"])
    assert body["status"] == "queued" and run.status == RunStatus.QUEUED
    assert before <= run.slot <= timezone.now()
    assert run.vantage == vantage("local") and run.concurrency == 10
    assert response["Location"].endswith(f"/api/v1/runs/{run.id}/")
    (message,) = published(vantage("local").queue)
    assert message.headers["task"] == "benchmarks.tasks.execute_run"
    assert message.payload[0] == [run.id]


@pytest.mark.usefixtures("memory_broker")
def test_it_lets_an_operator_trigger_a_run_but_not_a_plain_token_user(
    plain_user, reader, two_endpoints, django_capture_on_commit_callbacks
):
    body = {"endpoint": "acme-fast", "workload": "base", "vantage": "local"}
    assert reader.post("/api/v1/runs/", body, format="json").status_code == 403
    script = token_client(plain_user)
    refused = script.post("/api/v1/runs/", body, format="json")
    assert refused.status_code == 403
    assert "operators" in refused.json()["detail"]
    assert not Run.objects.exists()
    plain_user.groups.add(Group.objects.get(name="operators"))  # made by a data migration
    with django_capture_on_commit_callbacks(execute=True):
        response = script.post("/api/v1/runs/", body, format="json")
    assert response.status_code == 202
    assert [m.payload[0] for m in published("local")] == [[response.json()["id"]]]


def test_it_refuses_anonymous_triggers(anon, two_endpoints):
    body = {"endpoint": "acme-fast", "workload": "base"}
    assert anon.post("/api/v1/runs/", body, format="json").status_code == 401
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"workload": "base"}, "endpoint"),
        ({"endpoint": "nope", "workload": "base"}, "endpoint"),
        ({"endpoint": "acme-fast", "workload": 7}, "workload"),
        ({"endpoint": "acme-fast", "workload": "base", "vantage": "mars"}, "vantage"),
        ({"endpoint": "disabled-one", "workload": "base"}, "endpoint"),
    ],
)
def test_it_names_the_bad_field_of_a_trigger(staff, two_endpoints, body, field):
    make_endpoint(two_endpoints[0].provider, "disabled-one", enabled=False)
    response = staff.post("/api/v1/runs/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Run.objects.exists()


def test_it_does_not_let_runs_or_samples_be_edited(staff, two_endpoints):
    run = make_run(two_endpoints[0], hours_ago(1))
    make_sample(run, 0)
    assert staff.delete(f"/api/v1/runs/{run.id}/").status_code == 405
    assert staff.patch(f"/api/v1/runs/{run.id}/", {"status": "done"}).status_code == 405
    assert Sample.objects.count() == 1
