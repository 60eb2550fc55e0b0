"""An answer that lists its first rows only (the API's `limit`) solves the p25–p75 of the rows
past them only where the answer needs them, and shows what ranking every row shows."""

import random
from dataclasses import replace

import pytest

from advisor.projection import Projection
from advisor.ranking import Option, rank
from advisor.shape import Shape


def option(n: int, p25: float, p75: float, p90: float, cost: float | None) -> Option:
    return Option(
        endpoint_id=n,
        slug=f"e{n}",
        label=f"E{n:03d}",
        model="m",
        provider="p",
        provider_slug="p",
        protocol="openai_chat",
        base_url="http://127.0.0.1/v1",
        api_key_env="",
        simulated=False,
        price_in=None,
        price_out=None,
        price_cached=None,
        projection=Projection(
            endpoint_id=n, task_p25_s=p25, task_p50_s=(p25 + p75) / 2, task_p75_s=p75,
            task_p90_s=p90,
        ),
        cost_per_task=cost,
    )  # fmt: skip


def without_spreads(o: Option) -> Option:
    p = replace(o.projection, task_p25_s=None, task_p50_s=None, task_p75_s=None)
    return replace(o, projection=p)


def catalogue(rng: random.Random, count: int) -> list[Option]:
    """Overlapping spreads (long tie chains) and some prices."""
    rows = []
    for n in range(count):
        p25 = rng.uniform(1, 10)
        p75 = p25 + rng.uniform(0, 4)
        cost = rng.choice([None, rng.uniform(0.001, 0.01)])
        rows.append(option(n, p25, p75, p75 + rng.uniform(0, 2), cost))
    return rows


@pytest.mark.parametrize("seed", range(40))
def test_the_shown_rows_and_the_recommendation_are_those_of_ranking_every_row(seed):
    rng = random.Random(seed)
    shape = Shape(input_tokens=200, budget_s=rng.choice([4, 9, 14, 1000]))
    every = catalogue(rng, rng.randint(1, 30))
    shown = rng.randint(1, 6)
    known = {o.endpoint_id: o.projection for o in every}
    asked: list[int] = []

    def spreads(rows: list[Option]) -> None:
        for row in rows:
            asked.append(row.endpoint_id)
            row.projection = known[row.endpoint_id]

    lean = [without_spreads(o) for o in every]
    chosen_every = rank(every, shape)
    chosen_lean = rank(lean, shape, spreads=spreads, shown=shown)
    assert chosen_lean.slug == chosen_every.slug
    for full, row in zip(every[:shown], lean[:shown], strict=False):
        assert (row.slug, row.rank, row.tie, row.recommended) == (
            full.slug, full.rank, full.tie, full.recommended,
        )  # fmt: skip
        assert row.projection == full.projection
    leaders = [o for o in every if o.rank == 1 and o.inside_budget]
    needed = max(shown, len(leaders) + 1)
    assert len(asked) == len(set(asked)), "a row's spread was solved twice"
    assert len(asked) <= needed + shown, "spreads were solved far past the rows that need them"


def test_a_tie_chain_past_the_shown_rows_still_picks_the_cheapest_leader():
    shape = Shape(input_tokens=200, budget_s=100)
    every = [option(n, 5 + n * 0.1, 6 + n * 0.1, 7 + n * 0.1, 0.01 - n * 0.001) for n in range(5)]
    lean = [without_spreads(o) for o in every]
    known = {o.endpoint_id: o.projection for o in every}

    def spreads(rows: list[Option]) -> None:
        for row in rows:
            row.projection = known[row.endpoint_id]

    chosen = rank(lean, shape, spreads=spreads, shown=1)
    assert chosen.slug == "e4", "the cheapest of five tied leaders is the fifth row"
    assert lean[0].rank == 1 and not lean[0].recommended
