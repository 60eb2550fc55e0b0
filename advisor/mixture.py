"""Quantiles of weighted mixtures of normals (point masses where the spread is 0).

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
    w = np.ones_like(m) if weights is None else np.asarray(weights, dtype=float)
    f = np.asarray(fractions, dtype=float)
    members = [np.arange(m.size)] * f.size
    return many_quantiles(m, np.asarray(sds, dtype=float), w, members, f).tolist()


def many_quantiles(
    means: np.ndarray,
    sds: np.ndarray,
    weights: np.ndarray,
    members: Sequence[np.ndarray],
    fractions: np.ndarray,
) -> np.ndarray:
    """One quantile per question q: the fraction `fractions[q]` of the mixture of components
    `members[q]` (indexes into means, sds, weights; none empty). Every question bisects at once,
    each in its own bracket, so a whole advice costs ITERATIONS vector steps."""
    sizes = np.fromiter((len(m) for m in members), dtype=np.intp, count=len(members))
    chosen = np.concatenate(members)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    return segment_quantiles(means[chosen], sds[chosen], weights[chosen], starts, fractions)


def segment_quantiles(
    m: np.ndarray, s: np.ndarray, w: np.ndarray, starts: np.ndarray, fractions: np.ndarray
) -> np.ndarray:
    """many_quantiles with the components already laid out question after question: question q
    is the mixture of components starts[q] up to starts[q + 1] (ascending, none empty)."""
    sizes = np.diff(np.append(starts, len(m)))
    question = np.repeat(np.arange(len(starts)), sizes)
    w = w / np.add.reduceat(w, starts)[question]
    f = np.asarray(fractions, dtype=float) - 1e-12
    spread = s > 0
    safe = np.where(spread, s, 1.0)
    low = np.minimum.reduceat(m - 8 * s, starts)
    high = np.maximum.reduceat(m + 8 * s, starts)
    for _ in range(ITERATIONS):
        middle = (low + high) / 2
        gap = middle[question] - m
        below = np.where(spread, ndtr(gap / safe), gap >= 0)
        reached = np.add.reduceat(below * w, starts) >= f
        high = np.where(reached, middle, high)
        low = np.where(reached, low, middle)
    return high
