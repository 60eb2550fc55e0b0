"""One command rebuilds what is derived from the runs: rollups, the advisor digest, and more."""

from io import StringIO

import pytest
import time_machine
from django.core.cache import cache
from django.core.management import CommandError, call_command

from advisor.advice import advise
from advisor.models import RunDigest
from advisor.shape import Shape
from benchmarks.derived import registered
from benchmarks.models import RunRollup
from providers.models import Endpoint
from tests import advisor_data as seed
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def pinned():
    cache.clear()
    with time_machine.travel(seed.NOW, tick=False):
        yield
    cache.clear()


def measured_without_digest() -> Endpoint:
    """Runs written straight into the table (as a restore would): nothing derived yet."""
    data.default_workloads()
    data.vantage()
    endpoint = data.endpoint(data.provider("fastco"), "fast")
    seed.measured(endpoint, ttft_ms=300, decode_tps=250)
    return endpoint


def test_it_rebuilds_the_rollups_and_the_advisor_digest_in_one_command():
    endpoint = measured_without_digest()
    assert not RunDigest.objects.exists() and not RunRollup.objects.exists()
    assert not advise(Shape(input_tokens=200)).options, "no digest: the advisor sees no runs"

    out = StringIO()
    call_command("rebuild_derived", stdout=out)

    assert [store.name for store in registered()] == [
        "rollups",
        "board",
        "window-board",
        "advisor-digest",
    ]
    for store in registered():
        assert f"{store.name}: " in out.getvalue(), f"{store.name} not reported:\n{out.getvalue()}"
    assert RunRollup.objects.filter(endpoint=endpoint).exists(), "rollups not rebuilt"
    assert RunDigest.objects.filter(endpoint=endpoint).exists(), "digest not rebuilt"
    options = advise(Shape(input_tokens=200)).options
    assert [o.slug for o in options] == ["fast"], "the advisor answers from the rebuilt digest"


def test_it_rebuilds_only_the_store_asked_for_and_names_an_unknown_one():
    measured_without_digest()

    call_command("rebuild_derived", only=["advisor-digest"], stdout=StringIO())

    assert RunDigest.objects.exists() and not RunRollup.objects.exists()
    with pytest.raises(CommandError, match="no derived store named nonsense"):
        call_command("rebuild_derived", only=["nonsense"], stdout=StringIO())


def test_it_gives_seeded_history_to_the_advisor_too():
    call_command(
        "seed_history", endpoints=2, days=3, workloads=1, slots=3, samples_per_run=2,
        jobs=1, stdout=StringIO(),
    )  # fmt: skip

    seeded = set(Endpoint.objects.values_list("id", flat=True))
    assert set(RunDigest.objects.values_list("endpoint", flat=True)) == seeded, (
        "seed_history left endpoints out of the advisor's digest"
    )
    assert set(RunRollup.objects.values_list("endpoint", flat=True)) == seeded
