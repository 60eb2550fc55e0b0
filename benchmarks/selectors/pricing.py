"""The price × speed frontier (what a request costs is benchmarks.money's)."""

from typing import Any


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
