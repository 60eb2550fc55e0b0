"""Advice on a custom workload: each endpoint's projection from that workload's own runs.

docs/advisor.md, "A custom workload": every finished run of the workload on the endpoint is one
measured condition, weighted by recency as in advisor.projection. Its TTFT was measured at the
workload's real system prompt, prompts, context and tools, so no prefill cost is added; its
decode speed at the concurrency the workload ran at, so nothing is scaled. The spread within a
run, the task sum and the mixture quantiles are advisor.projection's. The input tokens per call
are the median the provider reported for the endpoint's runs (what its cost is priced at).
"""

from __future__ import annotations

import math

import numpy as np

from .measures import BUCKET, DECODE10, DECODE50, OK, SLOT, TOKENS, TTFT50, TTFT90, USERS
from .projection import HALF_LIFE_DAYS, Z90, Conditions, Projection, _present, tally
from .shape import Shape, task_seconds

MISSING_WORKLOAD = "workload"  # no usable run of the custom workload in the window


def _users_note(runs: np.ndarray, shape: Shape) -> str | None:
    users = sorted(int(u) for u in np.unique(runs[:, USERS]).tolist())
    if users == [shape.concurrency]:
        return None
    measured = " and ".join(str(u) for u in users)
    plural = "" if users == [1] else "s"
    return f"measured at {measured} user{plural} in flight, as the workload runs (not scaled)"


def prepare_measured(
    endpoint_id: int, rows: np.ndarray, shape: Shape
) -> tuple[Projection, Conditions | None]:
    """advisor.projection.prepare for a custom workload: `rows` are the endpoint's runs of that
    workload only (advisor.measures.load_points(workload=…)); None when it has no usable one."""
    result = Projection(endpoint_id=endpoint_id, runs=len(rows))
    tally(result, rows)
    runs = rows[(rows[:, OK] != 0) & ~np.isnan(rows[:, TTFT50]) & _present(rows[:, DECODE50])]
    if not len(runs):
        result.missing.append(MISSING_WORKLOAD)
        return result, None
    tokens = runs[:, TOKENS][_present(runs[:, TOKENS])]
    result.input_tokens = float(np.median(tokens)) if len(tokens) else None
    note = _users_note(runs, shape)
    if note:
        result.notes.append(note)
    slot = runs[:, SLOT]
    weights = 0.5 ** ((slot.max() - slot) / 86_400 / HALF_LIFE_DAYS)
    ttft50, ttft90, decode = runs[:, TTFT50], runs[:, TTFT90], runs[:, DECODE50]
    with np.errstate(divide="ignore", invalid="ignore"):
        ttft_sd = np.where(np.isnan(ttft90), 0.0, np.maximum(0.0, ttft90 - ttft50) / Z90)
        decode_s = shape.decoded_tokens / decode
        decode10 = runs[:, DECODE10]
        slow_s = shape.decoded_tokens / decode10
        decode_sd = np.where(_present(decode10), np.maximum(0.0, slow_s - decode_s) / Z90, 0.0)
    result.conditions = len(runs)
    result.ttft_ms = float(np.median(ttft50))
    result.decode_tps = float(np.median(decode))
    result.reasoning_s = shape.reasoning_tokens / result.decode_tps
    conditions = Conditions(
        means=task_seconds(shape, ttft_ms=ttft50, decode_tps=decode),
        sds=math.sqrt(shape.calls) * np.hypot(ttft_sd / 1000, decode_sd),
        weights=weights,
        buckets=runs[:, BUCKET].astype(int),
    )
    return result, conditions
