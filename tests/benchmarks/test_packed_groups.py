"""Merged.of_groups (one part per group, read as one array) reads every quantile of every
group as Merged of the same parts does."""

import numpy as np

from benchmarks.rollups import packed, sketch

METRICS = ("ttft", "decode", "e2e")
FRACTIONS = (0.1, 0.25, 0.5, 0.75, 0.9)


def _blob(rng: np.random.Generator, size: int) -> bytes:
    sketches: dict[str, dict[str, int]] = {}
    for metric in METRICS:
        for value in rng.lognormal(np.log(300.0), 0.5, size):
            sketch.add(sketches.setdefault(metric, {}), float(value))
    return packed.pack(sketch.triples(sketches))


def test_it_merges_groups_read_as_one_array_as_it_merges_their_parts():
    rng = np.random.default_rng(7)
    # Each group is a few rows' packed triples one after the other (as string_agg gives
    # them), some groups empty; metrics narrowed to two of the three.
    blobs = [
        b"".join(_blob(rng, int(rng.integers(1, 40))) for _ in range(rng.integers(0, 4)))
        for _ in range(60)
    ]
    groups = [(1 + number % 3, 10 + number) for number in range(len(blobs))]
    parts = [(group, packed.unpack(blob)) for group, blob in zip(groups, blobs, strict=True)]
    lengths = [len(blob) // 12 for blob in blobs]

    fast = packed.Merged.of_groups(groups, packed.unpack(b"".join(blobs)), lengths, METRICS[:2])
    slow = packed.Merged(parts, METRICS[:2])

    assert fast.groups == slow.groups == groups
    assert any(lengths) and not all(lengths)
    for metric in METRICS:
        assert fast.columns(metric, FRACTIONS) == slow.columns(metric, FRACTIONS)
        assert fast.table(metric, FRACTIONS) == slow.table(metric, FRACTIONS)
    assert fast.quantiles(groups[0], "ttft", FRACTIONS) == slow.quantiles(
        groups[0], "ttft", FRACTIONS
    )
