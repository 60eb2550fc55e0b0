"""The advisor marks the runs behind a figure whose client was saturated (docs/design.md §4)."""

import re

import pytest
from django.utils.html import strip_tags

from benchmarks.models import Run
from tests import advisor_data as seed

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("at_seed_now")]


@pytest.fixture
def saturated_world():
    """The seeded world, two of fast's eight runs measured by a saturated client, digested as
    each run's end digests it."""
    profile, fast, cheap, lonely = seed.world()
    runs = list(Run.objects.filter(endpoint=fast).order_by("slot")[:2])
    Run.objects.filter(id__in=[r.id for r in runs]).update(saturated_count=3)
    for run in runs:
        seed.finished(run)
    return fast


def test_it_counts_saturated_runs_in_the_advice_api(reader, saturated_world):
    body = reader.get("/api/v1/advice/", {"profile": "chat"}).json()

    counts = {r["endpoint"]: (r["saturated_runs"], r["runs"]) for r in body["results"]}
    assert counts["fast"] == (2, 8) and counts["cheap"] == (0, 8)
    assert body["basis"]["saturated_runs"] == 2


def test_it_marks_decode_and_the_basis_on_the_advisor_page(client, plain_user, saturated_world):
    client.force_login(plain_user)

    html = client.get("/advisor/chat/").content.decode()

    rows = {
        slug: " ".join(strip_tags(row).split())
        for slug, row in re.findall(r'<tr[^>]*data-slug="([^"]+)"[^>]*>(.*?)</tr>', html, re.S)
    }
    assert "sat. 2/8" in rows["fast"] and "sat." not in rows["cheap"], rows
    basis = strip_tags(re.search(r'<p id="basis">(.*?)</p>', html, re.S).group(1))
    assert "client saturated in 2 of" in basis
