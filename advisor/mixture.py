"""Quantiles of a weighted mixture of normals (point masses where the spread is 0).

A task's time under one measured condition (a run) is a sum of serial calls: its mean adds
up, and so does its variance (calls are independent draws within a run). Conditions differ by
time of day and load, so the task-time distribution is the mixture over the runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import ndtr

ITERATIONS = 64


def cdf(t: float, means: np.ndarray, sds: np.ndarray, weights: np.ndarray) -> float:
    spread = sds > 0
    z = np.where(spread, (t - means) / np.where(spread, sds, 1.0), 0.0)
    return float(np.dot(weights, np.where(spread, ndtr(z), (t >= means).astype(float))))


def quantiles(
    means: Sequence[float],
    sds: Sequence[float],
    fractions: Sequence[float],
    weights: Sequence[float] | None = None,
) -> list[float]:
    """The smallest t with P(T ≤ t) ≥ f for each fraction f, by bisection (to ~1e-15 of the
    range); components weigh equally unless `weights` are given. Raises ValueError without
    components."""
    m = np.asarray(means, dtype=float)
    s = np.asarray(sds, dtype=float)
    w = np.ones_like(m) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.sum() if m.size else w
    if m.size == 0:
        raise ValueError("a mixture needs at least one component")
    low_all = float(np.min(m - 8 * s))
    high_all = float(np.max(m + 8 * s))
    answers = []
    for fraction in fractions:
        low, high = low_all, high_all
        for _ in range(ITERATIONS):
            middle = (low + high) / 2
            if cdf(middle, m, s, w) >= fraction - 1e-12:
                high = middle
            else:
                low = middle
        answers.append(high)
    return answers
