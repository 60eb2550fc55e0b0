"""Lanes of one model side by side: the speed a lane buys for its price multiple.

Rows are the leaderboard's (medians of per-run medians over the window, runs served below their
lane already left out); each group is one provider's model with a standard lane and at least
one other, each other lane as multiples of the standard one's figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from providers.lanes import STANDARD

from ..costs import lane_price_multiple
from .rows import BoardRow


@dataclass(frozen=True, slots=True)
class LaneCompared:
    row: BoardRow
    decode_multiple: float | None
    ttft_multiple: float | None
    price_multiple: float | None

    @property
    def sentence(self) -> str:
        """ "2.1× the decode for 1.8× the price", or what of it is known."""
        if self.decode_multiple is None:
            return "no decode figure yet"
        speed = f"{self.decode_multiple:.1f}× the decode"
        if self.price_multiple is None:
            return speed + " (no price)"
        return f"{speed} for {self.price_multiple:.1f}× the price"


@dataclass(frozen=True, slots=True)
class LaneGroup:
    provider: str
    model: str
    standard: BoardRow
    lanes: tuple[LaneCompared, ...]


def _multiple(value: float | None, base: float | None) -> float | None:
    return value / base if value and base else None


def lane_groups(rows: list[BoardRow]) -> list[LaneGroup]:
    by_model: dict[tuple[str, str], list[BoardRow]] = {}
    for row in rows:
        by_model.setdefault((row.provider, row.model), []).append(row)
    groups = []
    # A model at one lane only (most of a board's) has nothing to compare: left out unsorted.
    several = [item for item in by_model.items() if len(item[1]) > 1]
    for (provider, model), members in sorted(several):
        standard = next((r for r in members if r.lane == STANDARD), None)
        others = [r for r in members if r.lane != STANDARD]
        if standard is None or not others:
            continue
        compared = tuple(
            LaneCompared(
                row=row,
                decode_multiple=_multiple(row.decode_tps_p50, standard.decode_tps_p50),
                ttft_multiple=_multiple(row.ttft_p50_ms, standard.ttft_p50_ms),
                price_multiple=lane_price_multiple(
                    row.blended_price_per_mtok, standard.blended_price_per_mtok
                ),
            )
            for row in sorted(others, key=lambda r: r.lane)
        )
        groups.append(LaneGroup(provider, model, standard, compared))
    return groups
