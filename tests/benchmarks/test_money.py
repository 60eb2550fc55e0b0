"""One definition of money (benchmarks.money): a missing price is not free, everywhere."""

from decimal import Decimal

import pytest

from benchmarks.money import Prices, blended_price, request_cost, task_cost, usd, usd_text


@pytest.mark.parametrize(
    "prices",
    [Prices.listed(None, 15), Prices.listed(3, None), Prices.listed(None, None, 0.3)],
    ids=["no input price", "no output price", "only a cached price"],
)
def test_it_calls_a_cost_without_both_list_prices_unknown_not_free(prices):
    assert request_cost(prices, input_tokens=100, output_tokens=100) is None, "not $0"
    assert task_cost(prices, calls=3, input_tokens=100, output_tokens=100) is None, "not $0"
    assert blended_price(prices) is None, "a blend needs both prices"


def test_it_calls_a_cost_without_a_token_count_unknown():
    prices = Prices.listed(3, 15)

    assert request_cost(prices, input_tokens=None, output_tokens=100) is None
    assert request_cost(prices, input_tokens=100, output_tokens=None) is None


def test_it_charges_cached_input_at_the_input_price_where_none_is_listed():
    listed = Prices.listed(2, 8, 0.5)
    unlisted = Prices.listed(2, 8)

    half_cached = task_cost(listed, calls=2, input_tokens=10_000, output_tokens=0, cached_share=0.5)
    uncached = task_cost(unlisted, calls=2, input_tokens=10_000, output_tokens=0, cached_share=0.5)

    assert half_cached < uncached, "the cache discount applies only where a cached price is listed"
    assert uncached == task_cost(unlisted, calls=2, input_tokens=10_000, output_tokens=0)


def test_it_multiplies_a_task_by_its_calls_exactly():
    prices = Prices.listed(Decimal("0.15"), Decimal("0.60"))
    one = request_cost(prices, input_tokens=1234, output_tokens=800)

    assert task_cost(prices, calls=20, input_tokens=1234, output_tokens=800) == 20 * one
    assert one == Decimal("0.0006651"), "Decimal arithmetic: no float residue in a price"


def test_it_prints_money_with_fixed_decimals_never_in_exponent_notation():
    tiny = request_cost(Prices.listed(0.02, 0.05), input_tokens=50, output_tokens=0)

    assert usd_text(tiny) == "0.000001", "rounded half up to micro-dollars"
    assert usd_text(Decimal(0)) == "0.000000"
    assert usd_text(Decimal("12.5")) == "12.500000"
    assert usd_text(None) == "", "unknown is blank in a CSV, not 0"
    assert usd(Decimal("0.00025649")) == 0.000256
