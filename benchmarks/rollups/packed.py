"""Merging many sketches at once: int32 triples (metric, ordinal, count) in numpy.

A group's sketch is the sum of its rows' triples; a quantile is read like
sketch.quantiles (PostgreSQL's percentile_cont over the bins' representative values).
"""

from collections.abc import Iterable, Sequence
from functools import lru_cache

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


@lru_cache(maxsize=65_536)
def _value(number: int) -> float:
    return sketch.ordinal_value(number)


class Merged:
    """The summed sketches of many groups (any hashable group key), read per metric."""

    def __init__(self, parts: Sequence[tuple[object, np.ndarray]]) -> None:
        self.groups: list[object] = []
        index: dict[object, int] = {}
        numbers, arrays = [], []
        for group, triples in parts:
            if group not in index:
                index[group] = len(self.groups)
                self.groups.append(group)
            numbers.append(index[group])
            arrays.append(triples)
        self._index = index
        data = np.concatenate(arrays) if arrays else np.empty((0, 3), dtype=np.int32)
        lengths = [len(triples) for triples in arrays]
        groups = np.repeat(np.array(numbers, dtype=np.int64), lengths)
        # One sortable int64 per bin: group and metric (codes < 16) above, ordinal below.
        keys = ((groups * 16 + data[:, 0]) << 32) | (data[:, 1].astype(np.int64) + (1 << 31))
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        starts = np.flatnonzero(np.diff(keys)) + 1
        starts = np.concatenate(([0], starts)) if len(keys) else starts
        counts = np.add.reduceat(data[order, 2].astype(np.int64), starts) if len(keys) else keys
        keys = keys[starts]
        self._keys = keys >> 32
        self._ordinals = (keys & 0xFFFFFFFF) - (1 << 31)
        self._cumulative = np.cumsum(counts)

    def quantiles(self, group: object, metric: str, fractions: Sequence[float]) -> list:
        """Interpolated quantiles of one group's metric; Nones when it has no values."""
        if group not in self._index:
            return [None] * len(fractions)
        key = self._index[group] * 16 + sketch.METRIC_CODES[metric]
        first = int(np.searchsorted(self._keys, key, side="left"))
        end = int(np.searchsorted(self._keys, key, side="right"))
        if first == end:
            return [None] * len(fractions)
        before = int(self._cumulative[first - 1]) if first else 0
        total = int(self._cumulative[end - 1]) - before
        cumulative = self._cumulative[first:end]
        result = []
        for fraction in fractions:
            position = fraction * (total - 1)
            below, above = int(np.floor(position)), int(np.ceil(position))
            # The (rank+1)-th smallest value is in the first bin whose running count passes rank.
            at = np.searchsorted(cumulative, [before + below, before + above], side="right")
            low = _value(int(self._ordinals[first + at[0]]))
            high = _value(int(self._ordinals[first + at[1]]))
            result.append(low + (high - low) * (position - below))
        return result
