"""The runs list's rows written out in Python (dashboard.run_rows): what the page shows of each
run, every text escaped."""

from datetime import UTC, datetime

import pytest

from benchmarks.models import RunStatus
from tests import dashboard_data as data

pytestmark = pytest.mark.django_db

SLOT = datetime(2026, 3, 10, 10, 0, 0, 250000, tzinfo=UTC)


@pytest.fixture
def viewer(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("viewer"))
    return client


def _row(client, run_id: int) -> str:
    html = client.get("/runs/").content.decode()
    return html[html.index(f'<tr data-run="{run_id}"') :].split("</tr>")[0]


def test_a_row_escapes_names_and_a_long_failure_reason(viewer):
    ep = data.endpoint(data.provider("p", name="P & <co>"), "ep", display_name='A&B "x"')
    run = data.run(ep, SLOT, ok=0, errors=3, ttft_ms=None, decode_tps=None)
    run.failure_reason = "<auth> " + "é" * 100
    run.save(update_fields=["failure_reason"])

    row = _row(viewer, run.id)

    assert row.startswith(f'<tr data-run="{run.id}" class="failed">')
    assert '<td class="slot wide">2026-03-10 10:00</td>' in row
    assert '<a href="/endpoints/ep/">A&amp;B &quot;x&quot;</a>' in row
    assert '<span class="sub">P &amp; &lt;co&gt;</span>' in row
    assert f'title="&lt;auth&gt; {"é" * 100}"' in row
    assert f">&lt;auth&gt; {'é' * 72}…</span>" in row  # 80 characters, the last an ellipsis
    assert '"TTFT p50">—</td>' in row and '"Decode p50">—</td>' in row
    assert '"OK / errors">0 / <span class="bad">3</span></td>' in row
    assert f'<a href="/runs/{run.id}/">requests ›</a>' in row


def test_a_row_marks_a_downgraded_run_and_a_saturated_client(viewer):
    ep = data.endpoint(data.provider("p", simulated=True), "ep")
    one = data.run(ep, SLOT, decode_tps=1204.6)
    one.downgraded, one.lane, one.saturated_count = True, "fast", 1
    one.save(update_fields=["downgraded", "lane", "saturated_count"])
    more = data.run(ep, SLOT.replace(hour=18), status=RunStatus.DONE, decode_tps=71.25)
    more.saturated_count = 3
    more.save(update_fields=["saturated_count"])

    first, second = _row(viewer, one.id), _row(viewer, more.id)

    assert "simulated</span>" in first and "served below its fast lane</span>" in first
    assert "kept out of the fast lane's figures" in first
    assert "1,205 tok/s" in first and "wrote in 1 request: decode" in first
    assert "71.2 tok/s" in second and "wrote in 3 requests: decode" in second
    assert "served below" not in second and 'class="failed"' not in second
    assert '"OK / errors">5 / 0</td>' in second
