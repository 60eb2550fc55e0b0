"""REST API: workloads, vantages and schedules (read for users, write for staff)."""

import pytest

from benchmarks.models import Schedule, Vantage, Workload
from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run, workload

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]


def test_it_lists_the_default_workloads(reader):
    response = reader.get("/api/v1/workloads/")
    assert response.status_code == 200
    slugs = [item["slug"] for item in response.json()["results"]]
    assert set(slugs) == set(Workload.objects.values_list("slug", flat=True))
    long = reader.get("/api/v1/workloads/long-context/").json()
    assert long["context_tokens"] == Workload.objects.get(slug="long-context").context_tokens


def test_it_lets_staff_create_a_workload_and_names_bad_fields(staff, reader):
    body = {"slug": "short", "name": "Short", "max_output_tokens": 256, "repetitions": 3}
    assert reader.post("/api/v1/workloads/", body, format="json").status_code == 403
    assert staff.post("/api/v1/workloads/", body, format="json").status_code == 201
    assert Workload.objects.get(slug="short").max_output_tokens == 256
    bad = staff.post(
        "/api/v1/workloads/", {"slug": "x", "name": "X", "repetitions": 0}, format="json"
    )
    assert bad.status_code == 400 and "repetitions" in bad.json()


def test_it_refuses_to_delete_a_workload_that_has_runs(staff):
    make_run(make_endpoint(make_provider()), hours_ago(1), wl=workload("base"))
    response = staff.delete("/api/v1/workloads/base/")
    assert response.status_code == 409
    assert "disable" in response.json()["detail"]
    assert Workload.objects.filter(slug="base").exists()


def test_it_keeps_one_default_vantage(staff):
    body = {"slug": "eu-west", "label": "EU west", "queue": "eu-west", "is_default": True}
    assert staff.post("/api/v1/vantages/", body, format="json").status_code == 201
    defaults = list(Vantage.objects.filter(is_default=True).values_list("slug", flat=True))
    assert defaults == ["eu-west"]


def test_it_refuses_a_queue_name_celery_cannot_use(staff):
    body = {"slug": "odd", "label": "Odd", "queue": "has spaces"}
    response = staff.post("/api/v1/vantages/", body, format="json")
    assert response.status_code == 400 and "queue" in response.json()


def test_it_creates_a_schedule_from_slugs(staff):
    make_endpoint(make_provider(), "acme-fast")
    body = {
        "name": "Twice a day",
        "times_of_day": ["18:00", "06:00"],
        "workloads": ["base", "long-context"],
        "endpoints": ["acme-fast"],
        "vantage": "local",
    }
    response = staff.post("/api/v1/schedules/", body, format="json")
    assert response.status_code == 201, response.json()
    schedule = Schedule.objects.get(name="Twice a day")
    assert schedule.times_of_day == ["06:00", "18:00"]
    assert set(schedule.workloads.values_list("slug", flat=True)) == {"base", "long-context"}
    got = staff.get(f"/api/v1/schedules/{schedule.pk}/").json()
    assert got["endpoints"] == ["acme-fast"] and got["vantage"] == "local"
    assert got["time_zone"] == ""  # UTC

    local = body | {"name": "New York mornings", "time_zone": "America/New_York"}
    response = staff.post("/api/v1/schedules/", local, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["time_zone"] == "America/New_York"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"times_of_day": ["25:00"]}, "times_of_day"),
        ({"times_of_day": ["02:00"], "interval_minutes": 30}, "times_of_day"),
        ({"times_of_day": []}, "times_of_day"),
        ({"workloads": []}, "workloads"),
        ({"workloads": ["no-such-workload"]}, "workloads"),
        ({"vantage": "nowhere"}, "vantage"),
        ({"interval_minutes": 0, "times_of_day": []}, "interval_minutes"),
        ({"time_zone": "Mars/Base"}, "time_zone"),
        ({"time_zone": "Europe/Berlin\u0000"}, "time_zone"),
    ],
)
def test_it_names_the_bad_field_of_a_schedule(staff, change, field):
    body = {"name": "S", "times_of_day": ["02:00"], "workloads": ["base"], "vantage": "local"}
    response = staff.post("/api/v1/schedules/", body | change, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_it_answers_404_for_a_schedule_id_out_of_range(reader):
    assert reader.get("/api/v1/schedules/99999999999999999999999/").status_code == 404
