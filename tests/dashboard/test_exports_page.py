"""The exports page (/exports/): a signed-in user asks for a background export and follows it."""

import gzip
import hashlib
import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core import mail

from benchmarks.models import Export
from dashboard.exports import jobs
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("bob", email="bob@example.com")


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def export_dir(tmp_path, settings):
    settings.TOKSPEED_EXPORT_DIR = str(tmp_path)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    return tmp_path


@pytest.fixture
def runs():
    acme, zeta = data.provider("acme"), data.provider("zeta")
    fast, other = data.endpoint(acme, "acme-fast"), data.endpoint(zeta, "zeta-big")
    made = [
        data.run(fast, NOW - timedelta(hours=1)),
        data.run(fast, NOW - timedelta(hours=30)),
        data.run(other, NOW - timedelta(hours=2)),
    ]
    for run in made:
        data.samples(run, count=2, ttft_ms=300.0)
    return made


def row_of(html: str, export: Export) -> str:
    return html[html.index(f'data-export="{export.token}"') :].split("</tr>")[0]


def test_it_sends_a_signed_out_visitor_to_log_in_even_when_the_dashboard_is_public(
    client, settings
):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    for response in (client.get("/exports/"), client.post("/exports/", {"kind": "runs"})):
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Export.objects.exists()


def test_it_builds_an_export_asked_for_on_the_page_and_links_it(
    signed_in, user, runs, export_dir, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as queued:
        response = signed_in.post(
            "/exports/",
            {"kind": "samples", "file_format": "csv.gz", "provider": "acme", "from": "2026-03-10"},
        )
    assert response.status_code == 302 and response["Location"] == "/exports/"
    export = Export.objects.get()
    assert export.requested_by == user and export.kind == "samples"
    assert export.filters == {"provider": "acme", "since": "2026-03-10T00:00:00+00:00"}
    assert len(queued) == 1  # the build is enqueued once the request commits

    pending = signed_in.get("/exports/").content.decode()
    assert "Waiting for a worker." in row_of(pending, export)
    assert "download" not in row_of(pending, export)

    assert jobs.build(export.id) is True
    export.refresh_from_db()
    row = row_of(signed_in.get("/exports/").content.decode(), export)
    assert export.rows == 2  # the one acme run since the 10th, two samples
    assert ">2<" in row and export.sha256 in row and f"{export.expires_at:%Y-%m-%d %H:%M}" in row
    link = re.search(r'href="([^"]+)">download<', row).group(1)
    download = signed_in.get(link)
    body = b"".join(download.streaming_content)
    assert hashlib.sha256(body).hexdigest() == export.sha256 == download["X-Checksum-SHA256"]
    assert "# end of export: 2 rows" in gzip.decompress(body).decode()
    assert mail.outbox and mail.outbox[0].to == ["bob@example.com"]


def test_it_shows_only_the_users_own_exports(signed_in, django_user_model, export_dir):
    eve = django_user_model.objects.create_user("eve")
    theirs = jobs.request_export(kind="runs", file_format="csv.gz", filters={}, user=eve)
    assert f'data-export="{theirs.token}"' not in signed_in.get("/exports/").content.decode()


def test_it_says_in_words_when_an_export_expired_or_failed(signed_in, user, runs, export_dir):
    with time_machine.travel(NOW, tick=False):
        done = jobs.request_export(kind="runs", file_format="parquet", filters={}, user=user)
        jobs.build(done.id)
        failed = jobs.request_export(
            kind="runs", file_format="csv.gz", filters={"endpoint": "gone"}, user=user
        )
        jobs.build(failed.id)
    done.refresh_from_db()
    with time_machine.travel(done.expires_at + timedelta(minutes=1), tick=False):
        html = signed_in.get("/exports/").content.decode()
    expired_row = row_of(html, done)
    assert "Expired" in expired_row and "the file was deleted" in expired_row
    assert ">download<" not in expired_row
    failed_row = row_of(html, failed)
    assert "Failed:" in failed_row and "endpoint" in failed_row and ">download<" not in failed_row


def test_it_refuses_a_bad_form_with_a_400_naming_the_field(signed_in, runs, export_dir):
    response = signed_in.post(
        "/exports/", {"kind": "runs", "file_format": "xlsx", "endpoint": "nope\x00"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'data-field="file_format"' in html and 'data-field="endpoint"' in html
    assert not Export.objects.exists()


def test_it_starts_the_form_from_the_runs_list_filters(signed_in, runs):
    html = signed_in.get("/exports/", {"provider": "zeta", "from": "2026-03-01"}).content.decode()
    assert re.search(r'<option value="zeta" selected>', html)
    assert 'value="2026-03-01"' in html
    assert "/api/v1/export/runs.csv?provider=zeta&amp;since=2026-03-01T00" in html


@pytest.mark.parametrize("query", ["provider=nobody", "from=soon", "colour=red", "endpoint=%00"])
def test_it_answers_bad_prefill_parameters_with_a_400(signed_in, runs, query):
    assert signed_in.get(f"/exports/?{query}").status_code == 400


def test_it_says_on_the_page_when_the_users_exports_are_over_quota(
    signed_in, user, runs, export_dir, settings
):
    settings.TOKSPEED_EXPORT_MAX_ACTIVE_PER_USER = 2
    form = {"kind": "runs", "file_format": "csv.gz"}
    with time_machine.travel(NOW, tick=False):
        assert [signed_in.post("/exports/", form).status_code for _ in range(2)] == [302, 302]
        refused = signed_in.post("/exports/", form)
    assert refused.status_code == 429 and refused["Retry-After"] == "30"
    assert "You have 2 exports in progress" in refused.content.decode()
    assert Export.objects.filter(requested_by=user).count() == 2
