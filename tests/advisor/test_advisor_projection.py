"""Advisor projections against figures computed by hand from known runs (no database)."""

import math
from datetime import UTC, datetime, timedelta
from statistics import NormalDist

import pytest

from advisor.measures import RunPoint
from advisor.projection import MISSING_CONCURRENCY, MISSING_LONG, project
from advisor.ranking import Option, rank, reason
from advisor.shape import Shape
from benchmarks.money import Prices

Z90 = NormalDist().inv_cdf(0.9)
T0 = datetime(2026, 11, 2, 2, 0, tzinfo=UTC)


def point(
    slot: datetime = T0,
    *,
    context: int = 0,
    users: int = 1,
    tokens: int = 200,
    ttft: float = 500.0,
    ttft_p90: float | None = None,
    decode: float = 100.0,
    decode_p10: float | None = None,
    ok: int = 5,
    errors: int = 0,
) -> RunPoint:
    return RunPoint(
        slot=slot,
        tod_bucket=slot.hour // 6,
        context_tokens=context,
        concurrency=users,
        input_tokens=tokens,
        ok=ok,
        errors=errors,
        ttft_p50_ms=ttft,
        ttft_p90_ms=ttft if ttft_p90 is None else ttft_p90,
        decode_tps_p50=decode,
        decode_tps_p10=decode if decode_p10 is None else decode_p10,
    )


def test_it_sums_serial_calls_of_ttft_decode_and_tools():
    shape = Shape(input_tokens=200, output_tokens=800, calls=20, tool_s=1.0)
    result = project(1, [point(ttft=500, decode=100)], shape)
    # 20 × (0.5 s + 800 / 100 s + 1 s) = 190 s, no spread.
    assert result.task_p50_s == pytest.approx(190.0)
    assert result.task_p90_s == pytest.approx(190.0)


def test_it_adds_hidden_reasoning_at_decode_speed():
    shape = Shape(input_tokens=200, output_tokens=100, reasoning_tokens=400, calls=2)
    result = project(1, [point(ttft=1000, decode=50)], shape)
    # per call 1 s + (100 + 400) / 50 = 11 s; reasoning alone 8 s.
    assert result.reasoning_s == pytest.approx(8.0)
    assert result.task_p50_s == pytest.approx(22.0)


def test_it_interpolates_ttft_between_base_and_long_context():
    runs = [point(ttft=400, tokens=200), point(context=30_000, tokens=30_200, ttft=3_400)]
    result = project(1, runs, Shape(input_tokens=15_200, output_tokens=100))
    # prefill cost: (3400 − 400) ms / 30,000 tokens = 0.1 ms per token; +15,000 → +1,500 ms.
    assert result.ttft_ms == pytest.approx(1_900.0)
    assert result.task_p50_s == pytest.approx(1.9 + 100 / 100)
    assert result.notes == []


def test_it_counts_cached_input_out_of_prefill():
    runs = [point(ttft=400, tokens=200), point(context=30_000, tokens=30_200, ttft=3_400)]
    result = project(1, runs, Shape(input_tokens=30_400, cached_share=0.5, output_tokens=100))
    # 15,200 tokens prefilled: the same TTFT as above.
    assert result.ttft_ms == pytest.approx(1_900.0)


def test_it_says_so_when_it_extrapolates_past_the_longest_measured_prompt():
    runs = [point(ttft=400, tokens=200), point(context=30_000, tokens=30_200, ttft=3_400)]
    result = project(1, runs, Shape(input_tokens=60_200, output_tokens=100))
    assert result.ttft_ms == pytest.approx(400 + 0.1 * 60_000)
    assert any("extrapolated" in note and "30,200" in note for note in result.notes)


def test_it_will_not_project_a_long_prompt_without_a_long_context_run():
    result = project(1, [point()], Shape(input_tokens=30_000))
    assert result.missing == [MISSING_LONG]
    assert not result.measured


def test_it_will_not_guess_the_prefill_of_a_2000_token_prompt_from_base_runs_alone():
    # GPU-class serving: 0.19 ms a prompt token, measured base runs of the 103-token prompt.
    base = [point(T0 + timedelta(hours=8 * i), tokens=103, ttft=600) for i in range(6)]
    shape = Shape(input_tokens=2_000, output_tokens=300, calls=10)
    alone = project(1, base, shape)
    assert alone.missing == [MISSING_LONG], f"projected without prefill: {alone.task_p50_s} s"
    assert not alone.measured and alone.task_p50_s is None
    long = point(T0, context=30_000, tokens=30_103, ttft=600 + 0.19 * 30_000)
    measured = project(1, [*base, long], shape)
    assert measured.measured, measured.missing
    assert measured.ttft_ms == pytest.approx(600 + 0.19 * (2_000 - 103)), measured.notes


def test_it_will_not_project_concurrency_without_concurrency_runs():
    result = project(1, [point()], Shape(input_tokens=200, concurrency=10))
    assert result.missing == [MISSING_CONCURRENCY]


def test_it_scales_decode_to_the_profiles_concurrency():
    runs = [point(ttft=500, decode=100), point(users=10, ttft=1000, decode=50)]
    at_ten = project(1, runs, Shape(input_tokens=200, output_tokens=100, concurrency=10))
    assert at_ten.decode_tps == pytest.approx(50.0)
    assert at_ten.ttft_ms == pytest.approx(1000.0)
    at_five = project(1, runs, Shape(input_tokens=200, output_tokens=100, concurrency=5))
    weight = math.log(5) / math.log(10)
    assert at_five.decode_tps == pytest.approx(100 * (1 - 0.5 * weight))
    assert at_five.ttft_ms == pytest.approx(500 * (1 + 1.0 * weight))


def test_it_carries_within_run_spread_into_task_p90():
    sigma_ms = 200.0
    run = point(ttft=1000, ttft_p90=1000 + Z90 * sigma_ms, decode=100)
    result = project(1, [run], Shape(input_tokens=200, output_tokens=100, calls=4))
    # mean 4 × (1 s + 1 s) = 8 s; σ = √4 × 0.2 s = 0.4 s.
    task = NormalDist(8.0, 0.4)
    assert result.task_p50_s == pytest.approx(task.inv_cdf(0.5), abs=1e-6)
    assert result.task_p90_s == pytest.approx(task.inv_cdf(0.9), abs=1e-6)


def test_it_mixes_conditions_across_runs():
    runs = [point(T0, ttft=1000), point(T0 + timedelta(hours=8), ttft=3000)]
    result = project(1, runs, Shape(input_tokens=200, output_tokens=100))
    # Two equally likely point masses at 2 s and 4 s: p25 = 2 s, p90 = 4 s.
    assert result.task_p25_s == pytest.approx(2.0, abs=1e-9)
    assert result.task_p90_s == pytest.approx(4.0, abs=1e-9)
    assert result.p50_by_bucket == {0: pytest.approx(2.0), 1: pytest.approx(4.0)}


def test_it_prices_a_task_with_cached_input():
    shape = Shape(input_tokens=10_000, cached_share=0.5, output_tokens=1_000, calls=2)
    usd = shape.cost(Prices.listed(2.0, 8.0, 0.5))
    assert float(usd) == pytest.approx(2 * (5_000 * 2.0 + 5_000 * 0.5 + 1_000 * 8.0) / 1e6)
    full = shape.cost(Prices.listed(2.0, 8.0))
    assert float(full) == pytest.approx(2 * (10_000 * 2.0 + 1_000 * 8.0) / 1e6), "no cached price"
    assert shape.cost(Prices.listed(None, 8.0)) is None, "a missing price is not free"


def test_it_measures_availability_from_the_error_rate():
    runs = [point(ok=9, errors=1), point(T0 + timedelta(hours=8), ok=0, errors=10)]
    assert project(1, runs, Shape(input_tokens=200)).availability == pytest.approx(9 / 20)


def option(slug: str, runs: list[RunPoint], shape: Shape, *, cost: float | None) -> Option:
    return Option(
        endpoint_id=hash(slug),
        slug=slug,
        label=slug.title(),
        model=slug,
        provider=slug,
        provider_slug=slug,
        protocol="openai_chat",
        base_url="http://127.0.0.1/v1",
        api_key_env="",
        simulated=False,
        price_in=None,
        price_out=None,
        price_cached=None,
        projection=project(1, runs, shape),
        cost_per_task=cost,
    )


@pytest.mark.parametrize(
    ("task_s", "feels"),
    [(0.99, "immediate"), (1.0, "holds attention"), (9.99, "holds attention"),
     (10.0, "background job")],
)  # fmt: skip
def test_it_classifies_task_time_against_the_interactive_thresholds(task_s, feels):
    shape = Shape(input_tokens=200, output_tokens=100, budget_s=task_s)
    # TTFT 0 and 100 tokens at 100/task_s tok/s: a task of exactly task_s seconds.
    only = option("a", [point(ttft=0.0, decode=100 / task_s)], shape, cost=None)
    rank([only], shape)
    assert only.verdict == feels
    assert only.within_time  # p90 equal to the budget is inside it


def test_it_marks_ties_and_lets_price_decide_between_them():
    shape = Shape(input_tokens=200, output_tokens=100, budget_s=10)
    spread = [T0 + timedelta(hours=8 * i) for i in range(4)]

    def runs(first: float) -> list[RunPoint]:
        return [point(s, ttft=first + 100 * i) for i, s in enumerate(spread)]

    fast = option("fast", runs(900), shape, cost=0.010)
    close = option("close", runs(1000), shape, cost=0.006)
    slow = option("slow", runs(4000), shape, cost=0.001)
    options = [slow, close, fast]
    chosen = rank(options, shape)
    assert [o.slug for o in options] == ["fast", "close", "slow"]
    assert (fast.rank, close.rank, slow.rank) == (1, 1, 3)
    assert close.tie and not slow.tie
    assert chosen is close
    line = reason(chosen, options, shape)
    assert line.startswith("Close: p90 task")
    assert "inside the 10 s budget" in line
    assert f"{1 - 0.006 / 0.010:.0%} cheaper than the next inside budget (Fast)" in line


def test_it_says_when_nothing_meets_the_budget():
    shape = Shape(input_tokens=200, output_tokens=100, budget_s=1)
    only = option("slow", [point(ttft=1000)], shape, cost=None)
    chosen = rank([only], shape)
    assert not chosen.inside_budget
    assert reason(chosen, [only], shape).startswith("Nothing meets the 1.0 s budget")


def test_it_calls_a_gap_too_small_to_print_a_tie_not_0_00_s_faster():
    shape = Shape(input_tokens=200, output_tokens=100, budget_s=10)
    spread = [T0 + timedelta(hours=8 * i) for i in range(4)]
    first = option("first", [point(s, ttft=900 + 100 * i) for i, s in enumerate(spread)], shape,
                   cost=None)  # fmt: skip
    second = option("second", [point(s, ttft=901 + 100 * i) for i, s in enumerate(spread)], shape,
                    cost=None)  # fmt: skip
    options = [second, first]
    chosen = rank(options, shape)
    assert chosen is first
    line = reason(chosen, options, shape)
    assert line.endswith("tied on time with Second (their spreads overlap).")
    assert "0.00 s faster" not in line
