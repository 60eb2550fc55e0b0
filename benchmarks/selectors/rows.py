"""BoardRow: one endpoint on the leaderboard, and the tie marking between neighbouring rows."""

import json
from dataclasses import dataclass, fields
from datetime import datetime
from functools import lru_cache
from operator import attrgetter
from typing import Any

from providers.models import model_family

from ..money import Prices, blended_price, usd
from .filters import SORT_KEYS

# Sort key -> (attribute of the median, attributes of its interval) for keys that have one.
INTERVALS: dict[str, tuple[str, str]] = {
    "ttft": ("ttft_p25_ms", "ttft_p75_ms"),
    "decode": ("decode_tps_p25", "decode_tps_p75"),
    "e2e": ("e2e_p25_ms", "e2e_p75_ms"),
    "prefill": ("prefill_cost_p25_ms", "prefill_cost_p75_ms"),
}
SORT_ATTRS: dict[str, str] = {
    "ttft": "ttft_p50_ms",
    "decode": "decode_tps_p50",
    "e2e": "e2e_p50_ms",
    "prefill": "prefill_cost_ms",
    "decode_c1": "decode_tps_c1",
    "decode_c10": "decode_tps_c10",
    "decode_peak": "decode_tps_peak",
    "throughput": "throughput_tps",
    "price_in": "price_in_per_mtok",
    "price_out": "price_out_per_mtok",
    "cost": "cost_per_request_usd",
    "errors": "error_rate",
    "samples": "samples",
    "last_run": "last_run_at",
    "name": "label",
}


@dataclass(slots=True)
class BoardRow:
    """One endpoint. Medians are of per-run medians over the window; p25–p75 is their spread.

    Times in ms, speeds in output tokens/s per user (decode_tps_*) or in aggregate
    (throughput_tps: all users of a run together), prices in USD per 1M tokens.
    """

    endpoint_id: int
    slug: str
    label: str
    model: str
    provider: str
    simulated: bool
    status: str
    lane: str = "standard"  # providers.lanes: the lane this endpoint asks for
    runs: int = 0
    samples: int = 0
    errors: int = 0
    # Runs behind the main columns whose client was saturated (any saturated sample; kept in the
    # medians and marked: docs/design.md §4); the same for each decode @1 / @10 / @peak column.
    saturated_runs: int = 0
    error_rate: float | None = None
    ttft_p25_ms: float | None = None
    ttft_p50_ms: float | None = None
    ttft_p75_ms: float | None = None
    decode_tps_p25: float | None = None
    decode_tps_p50: float | None = None
    decode_tps_p75: float | None = None
    e2e_p25_ms: float | None = None
    e2e_p50_ms: float | None = None
    e2e_p75_ms: float | None = None
    prefill_cost_ms: float | None = None
    prefill_cost_p25_ms: float | None = None
    prefill_cost_p75_ms: float | None = None
    prefill_context_tokens: int | None = None
    decode_tps_c1: float | None = None
    decode_tps_c10: float | None = None
    decode_tps_peak: float | None = None
    runs_c1: int = 0
    saturated_runs_c1: int = 0
    runs_c10: int = 0
    saturated_runs_c10: int = 0
    runs_peak: int = 0
    saturated_runs_peak: int = 0
    throughput_tps: float | None = None
    throughput_concurrency: int | None = None
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None
    input_tokens: float | None = None
    input_tokens_estimated: bool = False
    output_tokens: float | None = None
    cost_per_request_usd: float | None = None
    roofline_tps: float | None = None
    last_run_at: datetime | None = None
    last_run_status: str | None = None
    rank: int | None = None
    tie: bool = False
    # The family of the model id's named endpoints, for a row without a display name (not output).
    named_family: str = ""
    # The figure fields (FIGURE_FIELDS) as the API writes them in JSON, where the materialized
    # board kept them (figures_text; not output): the API splices them in, unparsed.
    figures_json: str = ""

    @property
    def has_data(self) -> bool:
        return self.runs > 0

    @property
    def saturated_share(self) -> float | None:
        """Share of the main columns' runs whose client was saturated (None without runs)."""
        return self.saturated_runs / self.runs if self.runs else None

    @property
    def blended_price_per_mtok(self) -> float | None:
        """USD per 1M tokens at 3 input : 1 output, the usual single-number price."""
        return _blended(self.price_in_per_mtok, self.price_out_per_mtok)

    @property
    def prices(self) -> Prices:
        return Prices.listed(self.price_in_per_mtok, self.price_out_per_mtok)

    @property
    def model_family(self) -> str:
        return self.named_family or _family(self.label)

    @property
    def roofline_efficiency(self) -> float | None:
        """Measured single-user decode ÷ the memory-bandwidth ceiling (0–1, can exceed 1)."""
        if self.roofline_tps and self.decode_tps_p50:
            return self.decode_tps_p50 / self.roofline_tps
        return None

    def as_dict(self) -> dict[str, Any]:
        # Every field is a scalar: a shallow copy gives what dataclasses.asdict's deep copy did,
        # at a fraction of the cost (the API turns 100 rows per request).
        data = dict(zip(_FIELD_NAMES, _FIELD_VALUES(self), strict=True))
        return self._derived(data)

    def as_spliced_dict(self, mark: Any) -> dict[str, Any]:
        """as_dict with the figure fields replaced, in their place, by one key SPLICE_KEY whose
        value is `mark`: the API writes figures_json there (dashboard/api/spliced.py)."""
        values = (*_HEAD_VALUES(self), mark, *_TAIL_VALUES(self))
        return self._derived(dict(zip(_SPLICED_NAMES, values, strict=True)))

    def _derived(self, data: dict[str, Any]) -> dict[str, Any]:
        data["last_run_at"] = self.last_run_at.isoformat() if self.last_run_at else None
        data["roofline_efficiency"] = self.roofline_efficiency
        data["saturated_share"] = self.saturated_share
        data["blended_price_per_mtok"] = self.blended_price_per_mtok
        data["model_family"] = self.model_family
        return data


# A row's figures, in BoardRow's order (its fields `runs` … `throughput_concurrency`): what
# the window's runs give, whatever the endpoint's name, prices or last run. A row is built with
# them as positional arguments (selectors.board_figures.row_figures gives them; the materialized
# board stores them as such).
FIGURE_FIELDS = (
    "runs",
    "samples",
    "errors",
    "saturated_runs",
    "error_rate",
    "ttft_p25_ms",
    "ttft_p50_ms",
    "ttft_p75_ms",
    "decode_tps_p25",
    "decode_tps_p50",
    "decode_tps_p75",
    "e2e_p25_ms",
    "e2e_p50_ms",
    "e2e_p75_ms",
    "prefill_cost_ms",
    "prefill_cost_p25_ms",
    "prefill_cost_p75_ms",
    "prefill_context_tokens",
    "decode_tps_c1",
    "decode_tps_c10",
    "decode_tps_peak",
    "runs_c1",
    "saturated_runs_c1",
    "runs_c10",
    "saturated_runs_c10",
    "runs_peak",
    "saturated_runs_peak",
    "throughput_tps",
    "throughput_concurrency",
)
_ALL_FIELDS = tuple(field.name for field in fields(BoardRow))
# Positional: endpoint_id … lane (8), the figures, then price_in_per_mtok …
FIGURES_AT = 8
if _ALL_FIELDS[FIGURES_AT : FIGURES_AT + len(FIGURE_FIELDS)] != FIGURE_FIELDS:
    raise TypeError("BoardRow's figure fields moved: update FIGURE_FIELDS and FIGURES_AT")


# providers.models.model_family of a label (two regular-expression substitutions), once per
# label rather than for every row each time a board is read (a page asks ~900 times).
_family = lru_cache(maxsize=4096)(model_family)


@lru_cache(maxsize=4096)
def _blended(price_in: float | None, price_out: float | None) -> float | None:
    """BoardRow.blended_price_per_mtok of these prices: exact (Decimal) arithmetic, done once
    per pair of prices rather than for each of a board's rows (the API reads 400 a request)."""
    return usd(blended_price(Prices.listed(price_in, price_out)))


_FIELD_NAMES = tuple(name for name in _ALL_FIELDS if name not in ("named_family", "figures_json"))
# The key that stands for the figure fields in as_spliced_dict (a control character: written
# "\u0001" in JSON, which no other key or value of a row is).
SPLICE_KEY = "\x01"
_FIGURES_END = FIGURES_AT + len(FIGURE_FIELDS)
_SPLICED_NAMES = (*_FIELD_NAMES[:FIGURES_AT], SPLICE_KEY, *_FIELD_NAMES[_FIGURES_END:])
_HEAD_VALUES = attrgetter(*_FIELD_NAMES[:FIGURES_AT])
_TAIL_VALUES = attrgetter(*_FIELD_NAMES[_FIGURES_END:])


def figures_text(values: list[Any]) -> str:
    """The figure fields (FIGURE_FIELDS' values, in order) as the API's compact JSON writes them
    inside a row: `"runs":12,"samples":48,…` (numbers and nulls: no text to escape)."""
    return json.dumps(
        dict(zip(FIGURE_FIELDS, values, strict=True)), separators=(",", ":"), allow_nan=False
    )[1:-1]


# Every field's value in one call (a tuple, in _FIELD_NAMES' order): a getattr per field cost
# more than the rest of as_dict for the API's 400 rows.
_FIELD_VALUES = attrgetter(*_FIELD_NAMES)


def sort_rows(rows: list[BoardRow], sort: str) -> list[BoardRow]:
    """Best first by the sort key (or reversed with "-key"); rows without a value go last."""
    key = sort.removeprefix("-")
    attr = SORT_ATTRS[key]
    reverse = sort.startswith("-") == SORT_KEYS[key]  # descending when "worse first" is wanted

    def value(row: BoardRow) -> Any:
        v = getattr(row, attr)
        return v.lower() if isinstance(v, str) else v

    present = [row for row in rows if value(row) is not None]
    missing = [row for row in rows if value(row) is None]
    present.sort(key=value, reverse=reverse)
    missing.sort(key=lambda row: row.label.lower())
    return present + missing


def mark_ties(rows: list[BoardRow], sort: str) -> None:
    """Rank rows; a row whose interval overlaps the row above's is a tie and shares its rank.

    Only median columns have an interval (p25–p75 of per-run medians); other columns rank
    plainly. Rows with no value for the sort column get no rank.
    """
    key = sort.removeprefix("-")
    bounds = INTERVALS.get(key)
    above: BoardRow | None = None
    for position, row in enumerate(rows, start=1):
        if getattr(row, SORT_ATTRS[key]) is None:
            row.rank, row.tie = None, False
            continue
        row.tie = bool(bounds and above is not None and _overlap(above, row, bounds))
        row.rank = above.rank if row.tie and above is not None else position
        above = row


def _overlap(a: BoardRow, b: BoardRow, bounds: tuple[str, str]) -> bool:
    low, high = bounds
    a_low, a_high, b_low, b_high = (
        getattr(a, low),
        getattr(a, high),
        getattr(b, low),
        getattr(b, high),
    )
    if None in (a_low, a_high, b_low, b_high):
        return False
    return a_low <= b_high and b_low <= a_high
