"""Run summaries of synthetic samples, in the shape `benchmarks.stats.summarize` gives.

summarize() loops in Python (~0.3 ms a run); a year of history has ~440,000 runs, so the same
percentiles (linear between closest ranks over successful samples) are taken here for all runs
at once with numpy. tests/benchmarks/test_seed_history.py checks the two agree.
"""

from collections import Counter
from typing import Any

import numpy as np

from ..stats import METRICS, PERCENTILES
from .generate import ERRORS, Batch


def _metric(batch: Batch, name: str) -> np.ndarray:
    source = "total_ms" if name == "e2e_ms" else name
    values = batch.samples.get(source)
    if values is None:
        return np.full(batch.run_count * batch.samples_per_run, np.nan)
    ok = batch.samples["error"] < 0
    return np.where(ok, values.astype(np.float64), np.nan)


def percentiles(values: np.ndarray, qs: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise percentiles ignoring NaN, linear between closest ranks (like stats.percentile):
    position = (n − 1) × q / 100 over each row's n present values. Returns (table, n); rows
    with n = 0 hold NaN."""
    ordered = np.sort(values, axis=1)  # NaN sort last
    counts = (~np.isnan(values)).sum(axis=1)
    last = np.maximum(counts - 1, 0)[:, None]
    position = last * (np.asarray(qs, dtype=np.float64)[None, :] / 100)
    low = np.floor(position).astype(np.int64)
    high = np.ceil(position).astype(np.int64)
    low_values = np.take_along_axis(ordered, low, axis=1)
    high_values = np.take_along_axis(ordered, high, axis=1)
    return low_values + (high_values - low_values) * (position - low), counts


def describe_all(batch: Batch) -> dict[str, tuple[list, list]]:
    """Per metric: (percentile rows [[p10, p50, p90, p99] per run], n per run)."""
    shape = (batch.run_count, batch.samples_per_run)
    described = {}
    for name in METRICS:
        table, counts = percentiles(_metric(batch, name).reshape(shape), PERCENTILES)
        if counts.any():
            described[name] = (table.tolist(), counts.tolist())
    return described


def summaries(batch: Batch, *, wall_s: np.ndarray, throughput: np.ndarray) -> list[dict]:
    """One summary dict per run, plus what finish_run adds (input tokens, concurrency...)."""
    k = batch.samples_per_run
    described = describe_all(batch)
    error = batch.samples["error"].reshape(-1, k).tolist()
    truncated = batch.samples["truncated"].reshape(-1, k).tolist()
    keys = [f"p{q}" for q in PERCENTILES]
    result = []
    for r in range(batch.run_count):
        categories = Counter(ERRORS[c] for c in error[r] if c >= 0)
        ok = k - sum(categories.values())
        outcomes = sum(1 for c, t in zip(error[r], truncated[r], strict=True) if c < 0 and t)
        summary: dict[str, Any] = {
            "samples": k,
            "ok": ok,
            "errors": k - ok,
            "errors_by_category": dict(sorted(categories.items())),
            "outcomes": {"truncated": outcomes} if outcomes else {},
            "tokens_source": {"usage": ok} if ok else {},
            "wall_s": float(wall_s[r]),
            "throughput_tps": float(throughput[r]) if ok else None,
        }
        for name, (table, counts) in described.items():
            if counts[r]:
                summary[name] = dict(zip(keys, table[r], strict=True)) | {"n": counts[r]}
        result.append(summary)
    return result
