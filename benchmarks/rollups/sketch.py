"""A mergeable quantile sketch (DDSketch's logarithmic mapping) stored as JSON bins.

Each value is counted in the bin `key = ⌈log_γ |v|⌉` of ddsketch's LogarithmicMapping, whose
representative value is within RELATIVE_ACCURACY of every value in it; merging sketches adds
bin counts, so a year is the sum of its days. A quantile is read like PostgreSQL's
percentile_cont: the values at ranks ⌊f·(n−1)⌋ and ⌈f·(n−1)⌉, interpolated; each is within
RELATIVE_ACCURACY of the exact order statistic, so the interpolation is too.

Bins are a plain dict ("p<key>" for positive values, "n<key>" for negative, "z" for zero) so
rows stay readable JSON on SQLite and PostgreSQL alike.
"""

import math
from collections.abc import Iterable

from ddsketch.mapping import LogarithmicMapping

RELATIVE_ACCURACY = 0.002
MAPPING = LogarithmicMapping(RELATIVE_ACCURACY)
# Values closer to zero than this count as zero (sub-nanosecond or sub-µtoken/s figures).
ZERO = 1e-9

Bins = dict[str, int]


def bin_of(value: float) -> str:
    if abs(value) < ZERO:
        return "z"
    return f"{'p' if value > 0 else 'n'}{MAPPING.key(abs(value))}"


def add(bins: Bins, value: float | None) -> None:
    if value is None or not math.isfinite(value):
        return
    key = bin_of(value)
    bins[key] = bins.get(key, 0) + 1


def merge(into: Bins, other: Bins) -> None:
    for key, count in other.items():
        into[key] = into.get(key, 0) + count


def merged(many: Iterable[Bins]) -> Bins:
    total: Bins = {}
    for bins in many:
        merge(total, bins)
    return total


def _value(key: str) -> float:
    if key == "z":
        return 0.0
    magnitude = MAPPING.value(int(key[1:]))
    return magnitude if key[0] == "p" else -magnitude


def quantiles(bins: Bins, fractions: Iterable[float]) -> list[float | None]:
    """Interpolated quantiles (0 ≤ f ≤ 1) of the sketched values; Nones when empty."""
    fractions = list(fractions)
    ordered = sorted(((_value(k), n) for k, n in bins.items() if n > 0), key=lambda kv: kv[0])
    total = sum(n for _, n in ordered)
    if total == 0:
        return [None] * len(fractions)
    cumulative, running = [], 0
    for _, count in ordered:
        running += count
        cumulative.append(running)

    def at_rank(rank: int) -> float:
        # The value of the (rank+1)-th smallest item.
        low, high = 0, len(cumulative) - 1
        while low < high:
            middle = (low + high) // 2
            if cumulative[middle] > rank:
                high = middle
            else:
                low = middle + 1
        return ordered[low][0]

    result = []
    for fraction in fractions:
        position = fraction * (total - 1)
        below, above = math.floor(position), math.ceil(position)
        low_value, high_value = at_rank(below), at_rank(above)
        result.append(low_value + (high_value - low_value) * (position - below))
    return result


def count(bins: Bins) -> int:
    return sum(bins.values())


# Packed sketches: int32 triples (metric code, ordinal, count), so thousands of sketches merge in
# one numpy pass instead of a Python loop over JSON bins. The ordinal orders bins by value:
# negative bins below 0 (zero), positive bins above; ORDINAL_SHIFT keeps them apart (keys of
# values between 1e-9 and 1e9 lie within ±6,000 at this accuracy).
METRIC_CODES = {
    "ttft": 0, "decode": 1, "e2e": 2, "throughput": 3, "input_tokens": 4, "output_tokens": 5,
    "prefill": 6,
}  # fmt: skip
ORDINAL_SHIFT = 100_000


def ordinal(key: str) -> int:
    if key == "z":
        return 0
    shifted = int(key[1:]) + ORDINAL_SHIFT
    return shifted if key[0] == "p" else -shifted


def ordinal_value(number: int) -> float:
    if number == 0:
        return 0.0
    magnitude = MAPPING.value(abs(number) - ORDINAL_SHIFT)
    return magnitude if number > 0 else -magnitude


def triples(sketches: dict[str, Bins]) -> list[tuple[int, int, int]]:
    """(metric code, ordinal, count) of every non-empty bin of a rollup row's sketches."""
    return [
        (METRIC_CODES[metric], ordinal(key), count)
        for metric, bins in sketches.items()
        if metric in METRIC_CODES
        for key, count in bins.items()
        if count > 0
    ]
