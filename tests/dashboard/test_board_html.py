"""The leaderboard's rows built in Python are the markup its template wrote, escaped alike."""

from datetime import UTC, datetime
from html import escape
from pathlib import Path

from django.template import Context, Template
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.selectors.rows import BoardRow
from dashboard.views import leaderboard
from dashboard.views.board_cells import cells
from dashboard.views.board_html import endpoint_url, esc, row_html

# The row of dashboard/leaderboard.html before it was built in Python, verbatim.
TEMPLATE_ROW = Template(
    (Path(__file__).parent / "leaderboard_row_before.html").read_text().rstrip("\n")
)

HOSTILE = '<b>A & B\'s "lane"</b>'


def _rows() -> list[BoardRow]:
    plain = BoardRow(
        endpoint_id=1, slug="fast-one", label="Fast one", model="m", provider="P",
        simulated=False, status="ok", runs=30, samples=120, errors=2, error_rate=2 / 120,
        ttft_p25_ms=180.0, ttft_p50_ms=200.5, ttft_p75_ms=230.0, decode_tps_p25=80.0,
        decode_tps_p50=91.25, decode_tps_p75=95.0, e2e_p25_ms=900.0, e2e_p50_ms=1000.0,
        e2e_p75_ms=1100.0, prefill_cost_ms=55.0, prefill_cost_p25_ms=40.0,
        prefill_cost_p75_ms=70.0, decode_tps_c1=90.0, decode_tps_c10=60.0, decode_tps_peak=20.0,
        throughput_tps=800.0, throughput_concurrency=64, price_in_per_mtok=0.5,
        price_out_per_mtok=1.5, input_tokens=3000.0, output_tokens=700.0,
        cost_per_request_usd=0.00255, last_run_at=datetime(2026, 6, 15, 10, 0, tzinfo=UTC),
        last_run_status="succeeded", rank=1,
    )  # fmt: skip
    tied = BoardRow(
        endpoint_id=2, slug="tied-two", label=HOSTILE, model="m", provider=HOSTILE,
        simulated=True, status="errors", runs=3, samples=9, errors=4, error_rate=4 / 9,
        ttft_p50_ms=210.0, input_tokens=2900.0, input_tokens_estimated=True, rank=1, tie=True,
    )  # fmt: skip
    empty = BoardRow(
        endpoint_id=3, slug="no-runs", label="No runs", model="m", provider="P",
        simulated=False, status="no runs yet",
    )  # fmt: skip
    return [plain, tied, empty]


def _alerts(count: int) -> dict:
    badges = [
        {"id": n, "css": "alert-badge major", "url": f"/alerts/{n}/", "title": HOSTILE,
         "text": "▼ decode −18\u00a0%"}
        for n in range(min(count, 2))
    ]  # fmt: skip
    return {"badges": badges, "more": max(count - 2, 0), "more_url": "/alerts/?endpoint=x&y=<z>"}


def test_it_writes_each_leaderboard_row_as_the_template_did(settings):
    settings.TOKSPEED_PUBLIC_DASHBOARD = True
    for query in ("", "?window=30d&workload=long-context", '?a=<b>&c="d"'):
        for row in _rows():
            for count in (0, 1, 4):
                c, a = cells(row), _alerts(count)
                context = {"row": row, "c": c, "a": a, "endpoint_query": query}
                want = TEMPLATE_ROW.render(Context(context))
                assert row_html(row, c, a, query) == want, (row.slug, query, count)
                assert row_html(row, c, a, query, endpoint_url()) == want
                if count == 0:  # the view's cell for a row without alerts
                    assert row_html(row, c, leaderboard._NO_ALERTS, query) == want
    assert "&lt;b&gt;A &amp; B&#x27;s &quot;lane&quot;&lt;/b&gt;" in row_html(
        _rows()[1], cells(_rows()[1]), _alerts(4), ""
    )


def test_a_row_of_one_sample_says_sample_not_samples():
    row = BoardRow(
        endpoint_id=4, slug="first-run", label="First run", model="m", provider="P",
        simulated=False, status="ok", runs=1, samples=1, errors=0, error_rate=0.0,
    )  # fmt: skip
    html = row_html(row, cells(row), leaderboard._NO_ALERTS, "")
    assert '<span class="c-samples">1</span> sample</span>' in html


@given(st.one_of(st.text(), st.integers(), st.floats(), st.none(), st.sampled_from("&<>\"'")))
def test_a_cell_is_escaped_as_html_escape_escapes_it(value):
    assert esc(value) == escape(str(value))
