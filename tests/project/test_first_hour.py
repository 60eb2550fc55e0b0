"""Small things a new user trips over in the first hour: plurals, the favicon, the login page's
wording on a public dashboard, and API docs that do not wait seconds for their schema."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from drf_spectacular.generators import SchemaGenerator

from benchmarks.finish import decide
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db


def test_it_says_the_only_request_failed_not_all_1_requests():
    summary = {"samples": 1, "ok": 0, "errors": 1, "errors_by_category": {"auth": 1}}
    _, reason = decide(SimpleNamespace(expected_samples=1), summary)
    assert reason == "The only request failed (1 × auth).", reason
    many = {"samples": 3, "ok": 0, "errors": 3, "errors_by_category": {"auth": 3}}
    assert decide(SimpleNamespace(expected_samples=3), many)[1].startswith("All 3 requests")


def test_it_writes_one_sample_and_one_run_in_the_singular(client, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    data.default_workloads()
    data.vantage()
    endpoint = data.endpoint(data.provider("acme"), "acme-one")
    data.run(endpoint, data.recent_slots(1)[0], ok=1)
    page = client.get(f"/endpoints/{endpoint.slug}/").content.decode()
    assert "of 1 samples" not in page and "· 1 runs" not in page, "plural after 1"
    assert "0 of 1 sample · 1 run" in page


def test_it_serves_a_favicon_instead_of_a_404(client, settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    response = client.get("/favicon.ico")
    assert response.status_code == 301, response.status_code
    assert finders.find(response["Location"].removeprefix(settings.STATIC_URL)), "no such file"
    assert 'rel="icon"' in client.get("/").content.decode()


@pytest.mark.parametrize(("public", "said"), [(True, "Everyone can read"), (False, "private")])
def test_it_words_the_login_page_by_whether_the_dashboard_is_public(client, settings, public, said):
    settings.TOKSPEED_PUBLIC_DASHBOARD = public
    page = client.get("/accounts/login/").content.decode()
    assert said in page, page
    if public:
        assert "private" not in page, "a public demo's login page calls the dashboard private"


def test_it_generates_the_api_schema_once_not_per_visit_of_the_docs(client, monkeypatch):
    client.force_login(User.objects.create_user("ana"))
    made = []
    real = SchemaGenerator.get_schema

    def counted(self, *args, **kwargs):
        made.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counted)
    first = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    second = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert first.status_code == second.status_code == 200
    assert first.content == second.content and b'"openapi"' in first.content
    assert len(made) <= 1, f"the schema was generated {len(made)} times for two visits"


def test_it_points_an_empty_dashboard_and_register_simulator_at_the_simulators_port(
    client, settings
):
    """The simulator listens on the launcher's port; the empty dashboard and `register_simulator
    --help` suggested another (8100), so a user who followed them registered a dead address."""
    from django.core.management import load_command_class

    from tokspeed.launcher import SIMULATOR_PORT

    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    page = client.get("/").content.decode()
    assert 'data-empty="no_endpoints"' in page, page[:300]
    ports = {int(p) for p in re.findall(r"(?:--port |127\.0\.0\.1:)(\d+)", page)}
    assert ports == {SIMULATOR_PORT}, f"the empty dashboard suggests ports {ports}"
    command = load_command_class("providers", "register_simulator")
    help_text = command.create_parser("manage.py", "register_simulator").format_help()
    suggested = {int(p) for p in re.findall(r"127\.0\.0\.1:(\d+)", help_text)}
    assert suggested == {SIMULATOR_PORT}, f"register_simulator --help suggests {suggested}"


def test_it_migrates_sqlite_without_an_index_warning(tmp_path):
    """A fresh clone uses SQLite, which ignores a covering index's INCLUDE columns: the
    `manage.py migrate` before `runserver` printed three lines of models.W040 to act on."""
    from tests.project.test_secret_key import MANAGE, fresh_env, run

    sqlite = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    env = fresh_env(tmp_path, DEBUG="1", DATABASE_URL=sqlite)
    result = run([*MANAGE, "migrate", "--verbosity", "0"], env)
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "W040" not in said, said
