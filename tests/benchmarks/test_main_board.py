"""The agent-loop and price reads rank every endpoint from the board's main columns alone
(main_board): the leaderboard's order and figures, without the columns they never show."""

from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard, main_board
from benchmarks.synthetic import seed_history

pytest_plugins = ["tests.api_fixtures"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttles")]

# 23:00 UTC: today's slots have run and the day's materialized board is written.
LATE = datetime(2026, 6, 15, 23, 0, tzinfo=UTC)
WINDOWS = ("72h", "7d", "30d", "90d", "365d")
QUERIES = (
    {},
    {"workload": "long-context"},
    {"concurrency": "10"},
    {"concurrency": "peak"},
    {"tod": "3"},
    {"workload": "long-context", "concurrency": "1"},  # not materialized: merged
)
SORTS = ("decode", "-ttft", "e2e", "name", "cost", "-price_in", "errors", "samples", "prefill")
# What the agent-loop and price reads show of a row, and what orders it.
MAIN_FIELDS = (
    "endpoint_id",
    "slug",
    "label",
    "model",
    "lane",
    "provider",
    "simulated",
    "runs",
    "samples",
    "errors",
    "saturated_runs",
    "error_rate",
    "ttft_p25_ms",
    "ttft_p50_ms",
    "ttft_p75_ms",
    "decode_tps_p25",
    "decode_tps_p50",
    "decode_tps_p75",
    "e2e_p25_ms",
    "e2e_p50_ms",
    "e2e_p75_ms",
    "price_in_per_mtok",
    "price_out_per_mtok",
    "input_tokens",
    "input_tokens_estimated",
    "output_tokens",
    "cost_per_request_usd",
    "roofline_tps",
)
# The last-run probe, and the rollups a long board merges when it is not materialized.
SKIPPED = ("LATERAL", '"benchmarks_windowrollup"', '"benchmarks_runrollup"')


@pytest.fixture
def history():
    with time_machine.travel(LATE, tick=False):
        seed_history(endpoints=3, days=40, workloads=4, slots=3, samples_per_run=1, now=LATE)
        yield


def _main(row) -> dict:
    return {field: getattr(row, field) for field in MAIN_FIELDS}


def test_it_is_the_leaderboards_order_with_its_main_columns(history):
    for window in WINDOWS:
        for query in QUERIES:
            for sort in SORTS:
                filters = BoardFilters.from_query({"window": window, "sort": sort, **query})
                full = [_main(row) for row in leaderboard(filters)]
                assert [_main(row) for row in main_board(filters)] == full, filters
                assert sum(1 for row in full if row["ttft_p50_ms"]) == 3, filters


# Each read, and how many groupings of the window's runs it makes (an exact window's only).
READS = (
    ("/api/v1/agent-loop/?window=30d", 0),
    ("/api/v1/agent-loop/?window=365d&sort=ttft", 0),
    ("/api/v1/agent-loop/?window=72h", 1),
    ("/agent-loop/?window=90d", 0),
    ("/agent-loop/?window=7d", 1),
    ("/price/?window=30d", 0),
    ("/price/?window=365d&y=ttft", 0),
    ("/price/?window=72h", 1),
)


def test_the_agent_loop_and_price_reads_skip_what_they_do_not_show(client, history):
    """No endpoint's last run (its status), no concurrency or prefill column: a long window is
    one read of the materialized rows, a short one one grouping of the window's runs."""
    client.force_login(User.objects.create_user("ana"))
    for path, grouped in READS:
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path)
        assert response.status_code == 200, path
        assert b"Synthetic model 001" in response.content, path
        queries = [q["sql"] for q in captured]
        assert not [q for q in queries if any(part in q for part in SKIPPED)], path
        runs = [q for q in queries if 'FROM "benchmarks_run"' in q and "GROUP BY" in q]
        assert len(runs) == grouped, (path, runs)
