"""Money at the output edge: no float noise ("1.0399999999999998") in JSON or CSV.

Amounts the API answers as JSON numbers are rounded to 12 significant figures (1.04); the CSV files
write fixed decimals through benchmarks.money.usd_text.
"""

from __future__ import annotations

from typing import Any

SIGNIFICANT = 12  # far above any price's precision, far below a float's noise (digits 16–17)
MONEY_KEYS = frozenset(
    {
        "price_in_per_mtok",
        "price_out_per_mtok",
        "blended_price_per_mtok",
        "cost_per_request_usd",
        "cost_usd",
        "cost_per_task",
        "cost_per_1000_tasks",
        "usd_per_1000_tasks",
        "break_even_usd_per_hour",
        "input_cost_per_token",
        "output_cost_per_token",
    }
)


def money(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.{SIGNIFICANT}g}")


def rounded_money(data: Any) -> Any:
    """`data` (dicts and lists, as a response holds them) with every amount under a money key
    rounded; everything else as it was."""
    if isinstance(data, dict):
        # Scalars are kept without a call each: a 400-row board holds ~20,000 of them.
        return {
            key: money(value)
            if key in MONEY_KEYS and isinstance(value, float)
            else rounded_money(value)
            if isinstance(value, dict | list)
            else value
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [rounded_money(item) for item in data]
    return data


def rounded_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """rounded_money of flat rows with the same keys (a selector's rows, every value a scalar),
    in place: only their money keys are visited, not each of their values."""
    keys = [key for key in rows[0] if key in MONEY_KEYS] if rows else []
    for row in rows:
        for key in keys:
            value = row[key]
            if isinstance(value, float):
                row[key] = money(value)
    return rows
