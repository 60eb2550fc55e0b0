"""Agent-loop projection: how long a chain of serial calls takes on each endpoint.

The time is benchmarks.task_time's (the advisor's too), the cost benchmarks.money's.
"""

from collections.abc import Iterable
from typing import Any

from ..money import task_cost, usd
from ..task_time import ATTENTION_S, IMMEDIATE_S, task_time_s, verdict
from .rows import BoardRow

DEFAULT_CALLS = 20
DEFAULT_TOKENS_PER_CALL = 800
# Tool time is the caller's own work between calls; 0 s isolates what the endpoint costs.
DEFAULT_TOOL_S = 0.0
# Largest inputs the calculator page and the API accept.
MAX_CALLS = 10_000
MAX_TOKENS_PER_CALL = 1_000_000
MAX_TOOL_S = 86_400
# Where the verdict changes (benchmarks.task_time), as the pages and the API show them.
THRESHOLDS = {"immediate": IMMEDIATE_S, "attention": ATTENTION_S}


def wall_time_s(
    *, calls: int, tokens_per_call: int, tool_s: float, ttft_ms: float, decode_tps: float
) -> float:
    """Seconds for `calls` serial calls, each waiting TTFT then decoding `tokens_per_call`."""
    return task_time_s(
        calls=calls,
        ttft_ms=ttft_ms,
        decoded_tokens=tokens_per_call,
        decode_tps=decode_tps,
        tool_s=tool_s,
    )


def loop_cost_usd(row: BoardRow, *, calls: int, tokens_per_call: int) -> float | None:
    """What the loop costs at list prices (benchmarks.money): each call sends the workload's
    measured prompt (input tokens) and gets `tokens_per_call` back. None without both prices or
    a prompt size."""
    cost = task_cost(
        row.prices, calls=calls, input_tokens=row.input_tokens, output_tokens=tokens_per_call
    )
    return usd(cost)


def project(
    rows: Iterable[BoardRow], *, calls: int, tokens_per_call: int, tool_s: float
) -> list[dict[str, Any]]:
    """One projection per row with a measured TTFT and decode speed, fastest first.

    The range uses the favourable and unfavourable quartiles of both medians (best: p25 TTFT
    with p75 decode).
    """
    if calls < 1 or tokens_per_call < 1 or tool_s < 0:
        raise ValueError("calls and tokens_per_call must be ≥ 1 and tool_s ≥ 0")
    projections = []
    for row in rows:
        ttft, tps = row.ttft_p50_ms, row.decode_tps_p50
        if ttft is None or not tps:
            continue
        args = {"calls": calls, "tokens_per_call": tokens_per_call, "tool_s": tool_s}
        wall = wall_time_s(ttft_ms=ttft, decode_tps=tps, **args)
        best = _bound(row.ttft_p25_ms, row.decode_tps_p75, args)
        worst = _bound(row.ttft_p75_ms, row.decode_tps_p25, args)
        projections.append(
            {
                "slug": row.slug,
                "label": row.label,
                "provider": row.provider,
                "simulated": row.simulated,
                "ttft_ms": ttft,
                "decode_tps": tps,
                # Runs behind these medians, and those whose client was saturated (kept, marked).
                "runs": row.runs,
                "saturated_runs": row.saturated_runs,
                "per_call_s": wall / calls,
                "waiting_s": calls * ttft / 1000,
                "decoding_s": calls * tokens_per_call / tps,
                "tool_total_s": calls * tool_s,
                "wall_s": wall,
                "wall_best_s": best,
                "wall_worst_s": worst,
                "verdict": verdict(wall),
                "input_tokens_per_call": row.input_tokens,
                "cost_usd": loop_cost_usd(row, calls=calls, tokens_per_call=tokens_per_call),
            }
        )
    projections.sort(key=lambda p: p["wall_s"])
    return projections


def _bound(ttft: float | None, tps: float | None, args: dict[str, Any]) -> float | None:
    if ttft is None or not tps:
        return None
    return wall_time_s(ttft_ms=ttft, decode_tps=tps, **args)
