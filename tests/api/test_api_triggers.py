"""Triggering runs costs money: operators only, every field honoured or refused, and a per-user
budget at list prices per hour and per day (429 naming the quota)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.contrib.auth.models import Group, User

from benchmarks.models import Run, RunTrigger
from benchmarks.triggers import run_cost_usd
from providers.models import Endpoint
from tests.api_factories import make_endpoint, make_provider, token_client, workload

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def priced():
    provider = make_provider("acme")
    return make_endpoint(
        provider,
        "acme-fast",
        price_input_per_mtok=Decimal("3"),
        price_output_per_mtok=Decimal("15"),
    )


@pytest.fixture
def operator(db) -> User:
    user = User.objects.create_user("olga")
    user.groups.add(Group.objects.get(name="operators"))
    return user


def trigger(client, **fields):
    body = {"endpoint": "acme-fast", "workload": "base"} | fields
    return client.post("/api/v1/runs/", body, format="json")


def test_it_honours_repetitions_for_that_run_only(operator, priced):
    response = trigger(token_client(operator), repetitions=2)
    assert response.status_code == 202, response.json()
    run = Run.objects.get(pk=response.json()["id"])
    assert run.repetitions == 2 and response.json()["repetitions"] == 2
    assert run.expected_samples == 2
    assert workload("base").repetitions != 2  # the workload itself is unchanged
    trigger_row = RunTrigger.objects.get(run=run)
    assert trigger_row.user == operator
    assert trigger_row.cost_usd == run_cost_usd(priced, workload("base"), repetitions=2)


@pytest.mark.parametrize(
    ("fields", "bad"),
    [
        ({"repetitions": 0}, "repetitions"),
        ({"repetitions": 101}, "repetitions"),
        ({"repetitions": "many"}, "repetitions"),
        ({"concurrency": 64}, "concurrency"),
        ({"max_output_tokens": 10}, "max_output_tokens"),
    ],
)
def test_it_refuses_fields_it_would_not_honour(operator, priced, fields, bad):
    response = trigger(token_client(operator), **fields)
    assert response.status_code == 400
    assert bad in response.json()
    assert not Run.objects.exists()


def test_it_refuses_a_trigger_past_the_hourly_quota_naming_it(operator, priced, settings):
    cost = run_cost_usd(priced, workload("base"), repetitions=workload("base").repetitions)
    settings.TOKSPEED_TRIGGER_QUOTA_HOUR_USD = float(cost * 3)
    settings.TOKSPEED_TRIGGER_QUOTA_DAY_USD = float(cost * 5)
    client = token_client(operator)
    with time_machine.travel(START):
        assert [trigger(client).status_code for _ in range(3)] == [202, 202, 202]
        refused = trigger(client)
    assert refused.status_code == 429
    detail = refused.json()["detail"]
    assert "Hourly run quota" in detail and "TOKSPEED_TRIGGER_QUOTA_HOUR_USD" in detail
    assert 3500 <= int(refused["Retry-After"]) <= 3601
    assert Run.objects.count() == 3
    # An hour later the hourly budget is free again, until the daily one is spent.
    with time_machine.travel(START + timedelta(minutes=61)):
        assert [trigger(client).status_code for _ in range(2)] == [202, 202]
        refused = trigger(client)
    assert refused.status_code == 429
    assert "Daily run quota" in refused.json()["detail"]
    assert "TOKSPEED_TRIGGER_QUOTA_DAY_USD" in refused.json()["detail"]
    assert Run.objects.count() == 5


def test_it_counts_each_users_budget_apart(operator, priced, settings, staff_user):
    cost = run_cost_usd(priced, workload("base"), repetitions=workload("base").repetitions)
    settings.TOKSPEED_TRIGGER_QUOTA_HOUR_USD = float(cost)
    olga, ada = token_client(operator), token_client(staff_user)
    with time_machine.travel(START):
        assert trigger(olga).status_code == 202
        assert trigger(olga).status_code == 429
        assert trigger(ada).status_code == 202


def test_it_refuses_a_run_that_alone_exceeds_the_quota_without_retry_after(
    operator, priced, settings
):
    settings.TOKSPEED_TRIGGER_QUOTA_HOUR_USD = 0.0001
    response = trigger(token_client(operator), workload="peak")
    assert response.status_code == 429
    assert "Retry-After" not in response
    assert not Run.objects.exists()


def test_it_counts_an_unpriced_endpoint_at_the_stated_default_not_as_free(operator, settings):
    make_endpoint(make_provider("acme"), "acme-fast")  # no list price
    base = workload("base")
    settings.TOKSPEED_TRIGGER_UNPRICED_PER_MTOK_USD = 15.0
    cost = run_cost_usd(Endpoint.objects.get(slug="acme-fast"), base, repetitions=base.repetitions)
    assert cost > 0, "an unpriced endpoint was counted as free"
    settings.TOKSPEED_TRIGGER_QUOTA_HOUR_USD = float(cost * 2)
    client = token_client(operator)
    with time_machine.travel(START):
        codes = [trigger(client).status_code for _ in range(5)]
    assert codes == [202, 202, 429, 429, 429], codes
    assert Run.objects.count() == 2
