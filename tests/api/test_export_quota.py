"""Background exports are capped per user: at most N in progress and M an hour; past either
the request is answered 429 with Retry-After and a message saying which cap, never 500."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from benchmarks.models import Export, ExportStatus
from dashboard.exports import jobs
from tests.api_factories import hours_ago, make_endpoint, make_provider, make_run

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles", "allow_private")]

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def runs():
    make_run(make_endpoint(make_provider("acme"), "acme-fast"), hours_ago(1), ttft_ms=250.0)


@pytest.fixture
def export_dir(settings, tmp_path):
    settings.TOKSPEED_EXPORT_DIR = str(tmp_path)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    return tmp_path


def ask(client):
    return client.get("/api/v1/export/samples.csv", {"background": "1"})


def test_it_refuses_the_41st_export_of_the_hour_with_429_and_retry_after(
    reader, plain_user, runs, export_dir, settings
):
    settings.TOKSPEED_EXPORT_MAX_PER_HOUR_PER_USER = 40
    settings.TOKSPEED_EXPORT_MAX_ACTIVE_PER_USER = 1000
    with time_machine.travel(NOW, tick=False) as clock:
        accepted = [ask(reader).status_code for _ in range(40)]
        clock.shift(timedelta(minutes=20))
        refused = ask(reader)
        assert accepted == [202] * 40
        assert refused.status_code == 429
        # The first of the 40 leaves the hour window 40 min later.
        assert refused["Retry-After"] == str(40 * 60)
        assert "40 exports in the last hour" in refused.json()["detail"]
        assert Export.objects.filter(requested_by=plain_user).count() == 40
        clock.shift(timedelta(minutes=40))
        assert ask(reader).status_code == 202


def test_it_refuses_an_export_while_the_user_has_too_many_in_progress(
    reader, plain_user, staff, runs, export_dir, settings
):
    settings.TOKSPEED_EXPORT_MAX_ACTIVE_PER_USER = 3
    with time_machine.travel(NOW, tick=False):
        assert [ask(reader).status_code for _ in range(3)] == [202] * 3
        refused = ask(reader)
        assert refused.status_code == 429 and refused["Retry-After"] == "30"
        assert "3 exports in progress" in refused.json()["detail"]
        assert ask(staff).status_code == 202  # another user's quota is their own
        # One finishes: the next is accepted.
        first = Export.objects.filter(requested_by=plain_user).order_by("id").first()
        assert jobs.build(first.id) is True
        assert Export.objects.get(id=first.id).status == ExportStatus.DONE
        assert ask(reader).status_code == 202
