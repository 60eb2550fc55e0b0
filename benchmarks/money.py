"""Money: the one definition of what a request, a task and a blended 1M tokens cost.

List prices are USD per 1M tokens (an endpoint's `price_input_per_mtok`,
`price_output_per_mtok`, `price_cached_input_per_mtok`). Every cost in tokspeed (pages, API,
advisor, exports, schedule budgets, trigger quotas) comes from the functions here.

The one rule for a missing price: **a missing price is not free**. A cost that needs the input or
the output price, or a token count, that is not known is None ("unknown"), never 0. The cached
input price is optional: where none is listed, cached tokens are charged at the input price.

Amounts are Decimals, exact from the prices; they are rounded only where they are shown, to
USD_PLACES decimals (micro-dollars, the trigger ledger's precision) and printed with fixed
decimals (`usd_text`), never in exponent notation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

MTOK = Decimal(1_000_000)
USD_PLACES = 6
MICRO_USD = Decimal(1).scaleb(-USD_PLACES)
# The usual single-number price: three input tokens to one output token.
BLEND_INPUT, BLEND_OUTPUT = 3, 1

Number = Decimal | float | int


def _decimal(value: Number | None) -> Decimal | None:
    if value is None:
        return None
    return value if isinstance(value, Decimal) else Decimal(str(value))


@dataclass(frozen=True, slots=True)
class Prices:
    """An endpoint's list prices in USD per 1M tokens; None where none is listed."""

    input: Decimal | None
    output: Decimal | None
    cached_input: Decimal | None = None

    @classmethod
    def listed(
        cls, input: Number | None, output: Number | None, cached_input: Number | None = None
    ) -> Prices:
        return cls(_decimal(input), _decimal(output), _decimal(cached_input))

    @classmethod
    def of(cls, endpoint: Any) -> Prices:
        """The prices of a providers.Endpoint (or anything with its three price fields)."""
        return cls.listed(
            endpoint.price_input_per_mtok,
            endpoint.price_output_per_mtok,
            getattr(endpoint, "price_cached_input_per_mtok", None),
        )

    @property
    def known(self) -> bool:
        """Both the input and the output price are listed: costs can be computed."""
        return self.input is not None and self.output is not None


def _per_request(prices: Prices, *, uncached: Decimal, cached: Decimal, output: Decimal) -> Decimal:
    """USD for one request at known prices and token counts (request_cost's formula)."""
    cached_price = prices.input if prices.cached_input is None else prices.cached_input
    return (uncached * prices.input + cached * cached_price + output * prices.output) / MTOK


def request_cost(
    prices: Prices,
    *,
    input_tokens: Number | None,
    output_tokens: Number | None,
    cached_tokens: Number = 0,
) -> Decimal | None:
    """USD for one request: uncached input × input price + cached input × cached price (the
    input price where none is listed) + output × output price. None when a price or a token
    count is unknown."""
    if not prices.known or input_tokens is None or output_tokens is None:
        return None
    inputs, cached = _decimal(input_tokens), _decimal(cached_tokens)
    return _per_request(
        prices, uncached=inputs - cached, cached=cached, output=_decimal(output_tokens)
    )


def task_costs(
    *,
    calls: int,
    input_tokens: Number | None,
    output_tokens: Number | None,
    cached_share: float = 0.0,
) -> Callable[[Prices], Decimal | None]:
    """task_cost at any prices, the token counts converted once (an advice prices a catalogue
    of hundreds of endpoints for one task)."""
    if input_tokens is None or output_tokens is None:
        return lambda prices: None
    inputs = _decimal(input_tokens)
    cached = inputs * _decimal(cached_share)
    uncached, output = inputs - cached, _decimal(output_tokens)

    def cost(prices: Prices) -> Decimal | None:
        if not prices.known:
            return None
        return calls * _per_request(prices, uncached=uncached, cached=cached, output=output)

    return cost


def task_cost(
    prices: Prices,
    *,
    calls: int,
    input_tokens: Number | None,
    output_tokens: Number | None,
    cached_share: float = 0.0,
) -> Decimal | None:
    """USD for a task of `calls` serial requests, each sending `input_tokens` (a `cached_share`
    of them from the prompt cache) and decoding `output_tokens` (reasoning tokens included)."""
    return task_costs(
        calls=calls,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_share=cached_share,
    )(prices)


def blended_price(prices: Prices) -> Decimal | None:
    """USD per 1M tokens at BLEND_INPUT input : BLEND_OUTPUT output; None without both prices."""
    if not prices.known:
        return None
    weight = BLEND_INPUT + BLEND_OUTPUT
    return (BLEND_INPUT * prices.input + BLEND_OUTPUT * prices.output) / weight


def rounded(value: Decimal | None) -> Decimal | None:
    """The amount to USD_PLACES decimals (half up), as shown and exported."""
    return None if value is None else value.quantize(MICRO_USD, rounding=ROUND_HALF_UP)


def usd(value: Decimal | None) -> float | None:
    """The amount as a JSON number, rounded to USD_PLACES decimals."""
    return None if value is None else float(rounded(value))


def usd_text(value: Decimal | float | None) -> str:
    """The amount with USD_PLACES fixed decimals ("0.000256", "12.500000"); "" when unknown."""
    return fixed_text(value, USD_PLACES)


def fixed_text(value: Number | None, places: int) -> str:
    """`value` with `places` fixed decimals, rounded half up from its shortest decimal form:
    what a CSV writes for a number (no float noise like 711.8865000000001, never an exponent
    like 2.56e-04); "" when unknown. Money goes through usd_text."""
    if value is None:
        return ""
    exact = _decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{exact:.{places}f}"
