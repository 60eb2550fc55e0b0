"""Task time: the one projection of how long a chain of serial calls takes (docs/design.md §1).

    task time = calls × (TTFT + decoded tokens ÷ decode speed + tool time)

The agent-loop page (benchmarks.selectors.agent_loop, from a leaderboard row's medians) and the
advisor (advisor.projection and advisor.batch, per measured condition, as numpy arrays) both
call `task_time_s`; the verdict words are the same on both.
Under ~1 s feels immediate, under ~10 s holds attention, beyond that it is a background job.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

IMMEDIATE_S = 1.0
ATTENTION_S = 10.0

Seconds = TypeVar("Seconds", float, np.ndarray)


def task_time_s(
    *, calls: int, ttft_ms: Seconds, decoded_tokens: float, decode_tps: Seconds, tool_s: float
) -> Seconds:
    """Seconds for `calls` serial calls, each waiting TTFT, decoding `decoded_tokens` (reasoning
    and output) at `decode_tps`, then `tool_s` of the caller's own work. Scalars or arrays."""
    return calls * (ttft_ms / 1000 + decoded_tokens / decode_tps + tool_s)


def verdict(wall_s: float) -> str:
    if wall_s < IMMEDIATE_S:
        return "immediate"
    if wall_s < ATTENTION_S:
        return "holds attention"
    return "background job"
