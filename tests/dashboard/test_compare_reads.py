"""The compare page reads its charts in one query per part for all the endpoints it compares:
the same figures as each endpoint's own history."""

import json
from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth.models import User

from benchmarks.rollups.write import rebuild
from benchmarks.selectors.history import compare_histories, endpoint_history
from providers.models import Endpoint
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 6, 15, 13, 30, tzinfo=UTC)
SLUGS = ["sim-gpu", "wafer-llama-70b", "gpu-llama-70b"]


@pytest.mark.parametrize("window_hours", [72, 24 * 365])
@pytest.mark.parametrize("workload", [None, "long-context"])
def test_it_charts_on_the_compare_page_what_each_endpoint_history_says(window_hours, workload):
    with time_machine.travel(NOW, tick=False):
        data.demo(slots=6, with_samples=False)
        rebuild()  # finish writes the day rollups a year's charts read (docs/design.md)
        chosen = [Endpoint.objects.select_related("provider").get(slug=s) for s in SLUGS]
        compared = compare_histories(chosen, workload=workload, window_hours=window_hours)
        alone = [endpoint_history(e, workload=workload, window_hours=window_hours) for e in chosen]
    assert [h["endpoint"]["slug"] for h in compared] == SLUGS
    for lean, whole in zip(compared, alone, strict=True):
        assert lean["endpoint"] == whole["endpoint"]
        assert lean["tod_profile"] == whole["tod_profile"]
        assert lean["concurrency"] == whole["concurrency"]
        assert lean["context"] == {k: v for k, v in whole["context"].items() if k != "pairs"}
        assert lean["runs"] == [
            {"slot": p["slot"], "ttft_ms": p["ttft_ms"], "decode_tps": p["decode_tps"]}
            for p in whole["runs"]
        ]
    assert all(h["runs"] and h["concurrency"] for h in compared)  # figures, not empty lists
    assert compared[0]["context"]["prefill_cost_ms"] is not None


def test_it_puts_those_histories_on_the_compare_page(client):
    client.force_login(User.objects.create_user("ana"))
    with time_machine.travel(NOW, tick=False):
        data.demo(slots=3, with_samples=False)
        html = client.get("/compare/?e=sim-gpu&e=wafer-llama-70b&window=7d").content.decode()
        chosen = [Endpoint.objects.select_related("provider").get(slug=s) for s in SLUGS[:2]]
        expected = compare_histories(chosen, window_hours=24 * 7)
    script = html.split('id="compare-histories" type="application/json">', 1)[1]
    assert json.loads(script.split("</script>", 1)[0]) == json.loads(json.dumps(expected))
