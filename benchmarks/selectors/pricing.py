"""Dollars: what one request costs at an endpoint's list prices (USD per 1M tokens)."""

from decimal import Decimal
from typing import Any

MILLION = 1_000_000


def cost_per_request(
    *,
    input_tokens: float | None,
    output_tokens: float | None,
    price_in_per_mtok: Decimal | float | None,
    price_out_per_mtok: Decimal | float | None,
) -> float | None:
    """USD for one request: input tokens × input price + output tokens × output price.

    None when a price or the output token count is unknown (a missing price is not free).
    """
    if price_in_per_mtok is None or price_out_per_mtok is None or output_tokens is None:
        return None
    return (
        (input_tokens or 0) * float(price_in_per_mtok) + output_tokens * float(price_out_per_mtok)
    ) / MILLION


def pareto_frontier(
    points: list[dict[str, Any]], *, price: str, speed: str, higher_is_better: bool
) -> list[dict[str, Any]]:
    """The cheapest-and-fastest frontier: points that no other point beats on both axes.

    A point is on it when every cheaper (or equally priced) point is slower. Points lacking
    either value are ignored. Returned cheapest first.
    """
    usable = [p for p in points if p.get(price) is not None and p.get(speed) is not None]
    sign = -1 if higher_is_better else 1
    usable.sort(key=lambda p: (p[price], sign * p[speed]))
    frontier: list[dict[str, Any]] = []
    for point in usable:
        if not frontier or sign * point[speed] < sign * frontier[-1][speed]:
            frontier.append(point)
    return frontier
