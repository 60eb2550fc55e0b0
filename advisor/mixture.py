"""Quantiles of a weighted mixture of normals (point masses where the spread is 0).

A task's time under one measured condition (a run) is a sum of serial calls: its mean adds
up, and so does its variance (calls are independent draws within a run). Conditions differ by
time of day and load, so the task-time distribution is the mixture over the runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import ndtr

ITERATIONS = 48  # halves the bracket (±8σ around every component) to ~4e-15 of its width


def quantiles(
    means: Sequence[float],
    sds: Sequence[float],
    fractions: Sequence[float],
    weights: Sequence[float] | None = None,
) -> list[float]:
    """The smallest t with P(T ≤ t) ≥ f for each fraction f, by bisection (all fractions at
    once); components weigh equally unless `weights` are given. Raises ValueError without
    components."""
    m = np.asarray(means, dtype=float)
    if m.size == 0:
        raise ValueError("a mixture needs at least one component")
    s = np.asarray(sds, dtype=float)
    w = np.ones_like(m) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.sum()
    f = np.asarray(fractions, dtype=float) - 1e-12
    spread = s > 0
    safe = np.where(spread, s, 1.0)
    low = np.full(f.shape, float(np.min(m - 8 * s)))
    high = np.full(f.shape, float(np.max(m + 8 * s)))
    for _ in range(ITERATIONS):
        middle = (low + high) / 2
        gap = middle[:, None] - m[None, :]
        below = np.where(spread, ndtr(gap / safe), gap >= 0)
        reached = below @ w >= f
        high = np.where(reached, middle, high)
        low = np.where(reached, low, middle)
    return high.tolist()
