"""Money at the output edge: no float noise ("1.0399999999999998") in JSON or CSV.

Amounts are computed as floats (prices × tokens); the API writes them rounded to 12 significant
figures (a JSON number: 1.04), the CSV files in fixed-point notation (0.00000123, not 1.23e-06).
"""

from __future__ import annotations

from decimal import Decimal
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
        "input_cost_per_token",
        "output_cost_per_token",
    }
)


def money(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.{SIGNIFICANT}g}")


def money_text(value: float | None) -> str:
    """Fixed-point text for a CSV cell ("" for none)."""
    if value is None:
        return ""
    return format(Decimal(f"{value:.{SIGNIFICANT}g}").normalize(), "f")


def rounded_money(data: Any) -> Any:
    """`data` (dicts and lists, as a response holds them) with every amount under a money key
    rounded; everything else as it was."""
    if isinstance(data, dict):
        return {
            key: money(value)
            if key in MONEY_KEYS and isinstance(value, float)
            else rounded_money(value)
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [rounded_money(item) for item in data]
    return data
