"""Quantiles of weighted mixtures of normals (point masses where the spread is 0).

A task's time under one measured condition (a run) is a sum of serial calls: its mean adds
up, and so does its variance (calls are independent draws within a run). Conditions differ by
time of day and load, so the task-time distribution is the mixture over the runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import ndtr, ndtri

ITERATIONS = 48  # halves the bracket (±8σ around every component) to ~4e-15 of its width
# solve_quantiles stops once a step moves less than this: ten thousand times finer than the 1e-9
# the advice is held to against the bisection, and far below any measured spread.
RELATIVE_TOLERANCE = 1e-13
ABSOLUTE_TOLERANCE = 1e-12  # seconds, for a quantile at 0
MAX_STEPS = 2 * ITERATIONS  # bisecting alone (all point masses) is done well before this


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


def _bracket(
    m: np.ndarray, s: np.ndarray, z: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each question's bracket: the least and the greatest of its components' own quantiles
    (z: the fraction's normal quantile laid over the components), widened a hair."""
    return (
        np.minimum.reduceat(m + s * (z - 1e-3), starts),
        np.maximum.reduceat(m + s * (z + 1e-3), starts),
    )


def brackets(
    m: np.ndarray, s: np.ndarray, starts: np.ndarray, fractions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of each question as solve_quantiles lays them out: the number it returns
    for a question is never below its low nor above its high."""
    sizes = np.diff(np.append(starts, len(m)))
    z = np.repeat(ndtri(np.asarray(fractions, dtype=float) - 1e-12), sizes)
    return _bracket(m, s, z, starts)


def solve_quantiles(
    m: np.ndarray, s: np.ndarray, w: np.ndarray, starts: np.ndarray, fractions: np.ndarray
) -> np.ndarray:
    """segment_quantiles to RELATIVE_TOLERANCE in a handful of evaluations of the mixture.

    The bracket is [min, max] over components of their own quantile (widened a hair against
    rounding): every component is below f at its lower end and above it at its upper end, so
    the mixture is too. Newton's method from the weighted mean of the components' quantiles,
    kept inside the bracket (a step that would leave it or shrink it too slowly bisects instead:
    point masses have no density, and a mixture has flat stretches). A question stops once its
    step is within the tolerance; the rest go on alone."""
    sizes = np.diff(np.append(starts, len(m)))
    # Each question's figure laid over its components: np.repeat, not an index per component
    # (the same values, a quarter of the time).
    w = w / np.repeat(np.add.reduceat(w, starts), sizes)
    f = np.asarray(fractions, dtype=float) - 1e-12
    z = np.repeat(ndtri(f), sizes)
    low, high = _bracket(m, s, z, starts)
    t = np.clip(np.add.reduceat(w * (m + s * z), starts), low, high)
    spread = s > 0
    w_density = np.where(spread, w / np.where(spread, s, 1.0), 0.0) / math.sqrt(2 * math.pi)
    moves = [high - low, high - low]  # each question's step before last, and last
    # Questions still open, and their components' figures (question-major, as `starts` lays
    # them out): narrowed when some close, not gathered again at every step. Where every
    # component has a spread (the advice's), the point-mass branch is not evaluated.
    open_q, f_open = np.arange(len(starts)), f
    local_starts, local_sizes = starts, sizes
    m_open, safe_open, w_open, density_open = m, np.where(spread, s, 1.0), w, w_density
    mass_open = None if spread.all() else spread
    for _ in range(MAX_STEPS):
        t_open = t[open_q]
        gap = np.repeat(t_open, local_sizes)
        gap -= m_open
        scaled = gap / safe_open
        below = ndtr(scaled) if mass_open is None else np.where(mass_open, ndtr(scaled), gap >= 0)
        below *= w_open
        excess = np.add.reduceat(below, local_starts) - f_open
        kernel = -0.5 * scaled  # the normal density's exp(-scaled²/2), in place
        kernel *= scaled
        np.exp(kernel, out=kernel)
        kernel *= density_open
        density = np.add.reduceat(kernel, local_starts)
        reached = excess >= 0
        high[open_q] = np.where(reached, t_open, high[open_q])
        low[open_q] = np.where(reached, low[open_q], t_open)
        lo, hi = low[open_q], high[open_q]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = t_open - excess / density
        enough = RELATIVE_TOLERANCE * np.abs(hi) + ABSOLUTE_TOLERANCE
        arrived = np.abs(step - t_open) <= enough  # (False where the step is not finite)
        # Newton's step is taken only if it stays inside and shrinks faster than bisection
        # would have two steps ago (Numerical Recipes' rtsafe): no cycling across a flat part.
        quick = np.abs(2 * excess) <= np.abs(moves[0][open_q] * density)
        inside = arrived | (np.isfinite(step) & (step > lo) & (step < hi) & quick)
        following = np.where(inside, step, (lo + hi) / 2)
        done = arrived | (hi - lo <= enough)
        moves[0][open_q] = moves[1][open_q]
        moves[1][open_q] = following - t_open
        t[open_q] = following
        if done.all():
            break
        if done.any():
            open_q, f_open = open_q[~done], f_open[~done]
            keep = np.repeat(~done, local_sizes)
            m_open, safe_open = m_open[keep], safe_open[keep]
            w_open, density_open = w_open[keep], density_open[keep]
            mass_open = None if mass_open is None else mass_open[keep]
            local_sizes = sizes[open_q]
            local_starts = np.cumsum(local_sizes) - local_sizes
    else:
        return high  # not settled in MAX_STEPS: the upper end holds at least the fraction
    return t
