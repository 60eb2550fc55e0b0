"""rounded_rows: rounded_money of a selector's flat rows, visiting only their money keys."""

import copy

from dashboard.api.money import rounded_money, rounded_rows


def test_flat_rows_round_as_rounded_money_rounds_them():
    rows = [
        {"slug": "a", "cost_usd": 0.1 + 0.2, "wall_s": 0.1 + 0.2, "runs": 3},
        {"slug": "b", "cost_usd": None, "wall_s": 1.0000000000000002, "runs": 0},
        {"slug": "c", "cost_usd": 2, "wall_s": 2.5, "runs": 1},
    ]
    want = rounded_money(copy.deepcopy(rows))
    assert rounded_rows(rows) == want
    assert want[0]["cost_usd"] == 0.3 and want[0]["wall_s"] == 0.1 + 0.2  # only money rounded
    assert rounded_rows([]) == []
