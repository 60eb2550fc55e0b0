"""Migration benchmarks 0034 keeps the materialized board's rows already written: each row's
figures as JSON text with its figures_text in a column apart, the same values a board reads."""

import json
from datetime import date

import pytest

from tests import dashboard_data as data
from tests.api_factories import make_endpoint, make_provider
from tests.migrations import migrate, migrate_to_latest

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BEFORE = [("benchmarks", "0033_window_figures")]
AFTER = [("benchmarks", "0034_board_figures_text")]
TEXT = '"runs":93,"samples":465,"error_rate":0.043010752688172046,"ttft_p50_ms":1e-05'
FIGURES = [True, 93, 465, 0.043010752688172046, 1e-05, None, 30000, 102.9253716650617, TEXT]


def test_the_rows_written_read_the_same_figures_and_text_after_it():
    old = migrate(BEFORE)
    try:
        endpoint = make_endpoint(make_provider("acme"))
        stored = old.get_model("benchmarks", "BoardFigures").objects.create(
            vantage_id=data.vantage().id,
            day=date(2026, 12, 4),
            days=30,
            tod_bucket=-1,
            filter_key="|",
            endpoint_id=endpoint.id,
            figures=FIGURES,
        )

        new = migrate(AFTER)

        row = new.get_model("benchmarks", "BoardFigures").objects.get(id=stored.id)
        assert json.loads(row.figures) == FIGURES[:-1]
        assert [type(value) for value in json.loads(row.figures)] == [
            type(value) for value in FIGURES[:-1]
        ]
        assert row.text == TEXT

        back = migrate(BEFORE)
        assert back.get_model("benchmarks", "BoardFigures").objects.get(id=stored.id).figures == (
            FIGURES
        )
    finally:
        migrate_to_latest()
