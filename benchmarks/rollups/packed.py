"""Merging many sketches at once: int32 triples (metric, ordinal, count) in numpy.

A group's sketch is the sum of its rows' triples; a quantile is read like
sketch.quantiles (PostgreSQL's percentile_cont over the bins' representative values).
"""

from collections.abc import Iterable, Sequence

import numpy as np

from . import sketch


def pack(rows: Iterable[tuple[int, int, int]]) -> bytes:
    array = np.array(sorted(rows), dtype=np.int32).reshape(-1, 3)
    return array.tobytes()


def unpack(data: bytes | memoryview | None) -> np.ndarray:
    if not data:
        return np.empty((0, 3), dtype=np.int32)
    return np.frombuffer(data, dtype=np.int32).reshape(-1, 3)


def add(data: bytes | memoryview | None, extra: Iterable[tuple[int, int, int]]) -> bytes:
    """The packed sum of a packed sketch and some more triples."""
    merged: dict[tuple[int, int], int] = {}
    for metric, number, count in [*unpack(data).tolist(), *extra]:
        merged[(metric, number)] = merged.get((metric, number), 0) + count
    return pack((metric, number, count) for (metric, number), count in merged.items())


class Merged:
    """The summed sketches of many groups (any hashable group key), read per metric."""

    def __init__(
        self, parts: Sequence[tuple[object, np.ndarray]], metrics: Iterable[str] | None = None
    ) -> None:
        """metrics: only these are read (the others' bins are dropped before merging)."""
        groups: list[object] = []
        index: dict[object, int] = {}
        numbers, arrays = [], []
        for group, triples in parts:
            if group not in index:
                index[group] = len(groups)
                groups.append(group)
            numbers.append(index[group])
            arrays.append(triples)
        # Each part is sorted (pack sorts): laid out group by group, the keys below are a few
        # sorted runs per group, which the stable sort (timsort) merges in near-linear time.
        layout = sorted(range(len(arrays)), key=numbers.__getitem__)
        arrays = [arrays[i] for i in layout]
        data = np.concatenate(arrays) if arrays else np.empty((0, 3), dtype=np.int32)
        lengths = [len(triples) for triples in arrays]
        owners = np.repeat(np.array([numbers[i] for i in layout], dtype=np.int64), lengths)
        self._merge(groups, index, data, owners, metrics)

    @classmethod
    def of_groups(
        cls,
        groups: Sequence[object],
        data: np.ndarray,
        lengths: Sequence[int],
        metrics: Iterable[str] | None = None,
    ) -> "Merged":
        """Merged([(group, its triples) ...]) when each group is one part and named once:
        `data` holds the groups' triples one after the other, `lengths` how many each has (a
        year of day points is ~1,500 groups: no Python work per group)."""
        merged = cls.__new__(cls)
        owners = np.repeat(np.arange(len(groups), dtype=np.int64), lengths)
        index = {group: number for number, group in enumerate(groups)}
        merged._merge(list(groups), index, data, owners, metrics)
        return merged

    def _merge(
        self,
        groups: list[object],
        index: dict[object, int],
        data: np.ndarray,
        owners: np.ndarray,
        metrics: Iterable[str] | None,
    ) -> None:
        """Sum the triples of each group (owners: each triple's group number)."""
        self.groups = groups
        self._index = index
        if metrics is not None:
            keep = np.isin(data[:, 0], [sketch.METRIC_CODES[m] for m in metrics])
            data, owners = data[keep], owners[keep]
        # One sortable int64 per bin: group and metric (codes < 16) above, ordinal below.
        keys = ((owners * 16 + data[:, 0]) << 32) | (data[:, 1].astype(np.int64) + (1 << 31))
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        starts = np.flatnonzero(np.diff(keys)) + 1
        starts = np.concatenate(([0], starts)) if len(keys) else starts
        counts = np.add.reduceat(data[order, 2].astype(np.int64), starts) if len(keys) else keys
        keys = keys[starts]
        self._keys = keys >> 32
        self._ordinals = (keys & 0xFFFFFFFF) - (1 << 31)
        self._cumulative = np.cumsum(counts)
        self._tables: dict[tuple, list[list]] = {}

    def quantiles(self, group: object, metric: str, fractions: Sequence[float]) -> list:
        """Interpolated quantiles of one group's metric; Nones when it has no values."""
        if group not in self._index:
            return [None] * len(fractions)
        return self.table(metric, tuple(fractions))[self._index[group]]

    def table(self, metric: str, fractions: tuple[float, ...]) -> list[list]:
        """quantiles() of every group at once (one vectorised pass), in group order."""
        cached = self._tables.get((metric, fractions))
        if cached is not None:
            return cached
        result, empty = self.array(metric, fractions)
        rows = [
            [None] * len(fractions) if empty[number] else [float(v) for v in result[number]]
            for number in range(len(self.groups))
        ]
        self._tables[(metric, fractions)] = rows
        return rows

    def columns(self, metric: str, fractions: tuple[float, ...]) -> list[list]:
        """table() by fraction: one list per fraction of every group's value (None when the
        group has no values), without a Python list per group."""
        result, empty = self.array(metric, fractions)
        values = np.where(empty[:, None], np.nan, result).T.tolist()
        return [[None if v != v else v for v in column] for column in values]

    def array(self, metric: str, fractions: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(groups × fractions quantiles, which groups have no values: their row is junk)."""
        wanted = np.arange(len(self.groups), dtype=np.int64) * 16 + sketch.METRIC_CODES[metric]
        first = np.searchsorted(self._keys, wanted, side="left")
        end = np.searchsorted(self._keys, wanted, side="right")
        empty = first == end
        padded = np.concatenate(([0], self._cumulative))
        before = padded[first]
        total = padded[end] - before
        fraction = np.array(fractions, dtype=np.float64)
        position = fraction[None, :] * np.maximum(total - 1, 0)[:, None]
        below, above = np.floor(position), np.ceil(position)
        # The (rank+1)-th smallest value is in the first bin whose running count passes rank.
        at_below = np.searchsorted(self._cumulative, before[:, None] + below, side="right")
        at_above = np.searchsorted(self._cumulative, before[:, None] + above, side="right")
        top = max(len(self._ordinals) - 1, 0)
        low = _values(self._ordinals[np.minimum(at_below, top)]) if len(self._ordinals) else below
        high = _values(self._ordinals[np.minimum(at_above, top)]) if len(self._ordinals) else below
        return low + (high - low) * (position - below), empty


def _values(ordinals: np.ndarray) -> np.ndarray:
    """sketch.ordinal_value of every ordinal (ddsketch's LogarithmicMapping.value, vectorised)."""
    mapping = sketch.MAPPING
    keys = np.abs(ordinals) - sketch.ORDINAL_SHIFT
    magnitude = np.power(2.0, (keys - mapping._offset) / mapping._multiplier) * (
        2.0 / (1 + mapping.gamma)
    )
    return np.where(ordinals == 0, 0.0, np.where(ordinals > 0, magnitude, -magnitude))


# Every quantile a board reads of a window (quartiles; medians are their middle).
BOARD_FRACTIONS = (0.25, 0.5, 0.75)


def margin_of(runs: int, days: int) -> int:
    """How many values of one metric a day may add to a window row's near sketch and leave its
    quartiles exact: twice a mean day's runs and at least 8 (a busier day is read in full)."""
    return max(8, 2 * -(-runs // max(days, 1)))


def near(data: bytes | memoryview | None, margin: int) -> bytes:
    """The packed sketch cut down to the bins around its quartiles: merged with at most
    `margin` more values per metric (today's), every quartile reads the bin it reads in the
    whole sketch, so the figure is the same.

    A merged quantile of rank r takes the r-th smallest of the window's n values and today's
    t ≤ margin, so it lies among the window's ranks [⌊f(n−1)⌋ − t, ⌈f(n−1+t)⌉]; the bins
    holding those ranks (one rank of slack each side) are kept as they are, and each run of
    the others between or around them is lumped into one bin at its first ordinal with their
    count, so cumulative counts, and a value of today's, fall on either side of a kept bin as
    in the whole sketch. A rank never lands in a lump while t ≤ margin (read.settle checks)."""
    triples = unpack(data)
    parts = []
    for metric in np.unique(triples[:, 0]):
        bins = triples[triples[:, 0] == metric]
        cumulative = np.cumsum(bins[:, 2].astype(np.int64))
        total = int(cumulative[-1])
        keep = np.zeros(len(bins), dtype=bool)
        for fraction in BOARD_FRACTIONS:
            low = max(0, int(np.floor(fraction * (total - 1))) - margin - 1)
            high = min(total - 1, int(np.ceil(fraction * (total - 1 + margin))) + 1)
            first = int(np.searchsorted(cumulative, low, side="right"))
            last = int(np.searchsorted(cumulative, high, side="right"))
            keep[first : last + 1] = True
        parts.append(_lumped(bins, keep))
    if not parts:
        return b""
    return np.concatenate(parts).astype(np.int32).tobytes()


def _lumped(bins: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Kept bins as they are; each run of dropped ones as one bin (first ordinal, their sum)."""
    runs = np.flatnonzero(np.diff(np.concatenate(([1], keep.astype(np.int8)))) != 0)
    out = []
    start = 0
    for boundary in [*runs.tolist(), len(bins)]:
        if boundary > start:
            chunk = bins[start:boundary]
            if keep[start]:
                out.append(chunk)
            else:
                out.append(np.array([[chunk[0, 0], chunk[0, 1], chunk[:, 2].sum()]]))
        start = boundary
    return np.concatenate(out) if out else np.empty((0, 3), dtype=np.int32)
