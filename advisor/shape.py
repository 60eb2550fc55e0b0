"""Shape: the figures of a workload the projection needs (from a profile or ad hoc)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from benchmarks.money import Prices, task_costs
from benchmarks.task_time import Seconds, task_time_s

from .models import WorkloadProfile


@dataclass(frozen=True, slots=True)
class Shape:
    """One task = `calls` serial calls, each sending `input_tokens` (a `cached_share` of them
    from the provider's prompt cache), decoding `reasoning_tokens` hidden then `output_tokens`
    shown, then `tool_s` seconds of the caller's own work; `concurrency` users at once."""

    input_tokens: int = 1_000
    output_tokens: int = 500
    reasoning_tokens: int = 0
    cached_share: float = 0.0
    calls: int = 1
    tool_s: float = 0.0
    concurrency: int = 1
    budget_s: float = 10.0
    max_cost_usd: float | None = None
    models: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, profile: WorkloadProfile) -> Shape:
        return cls(
            input_tokens=profile.input_tokens,
            output_tokens=profile.output_tokens,
            reasoning_tokens=profile.reasoning_tokens,
            cached_share=profile.cached_share,
            calls=profile.calls,
            tool_s=profile.tool_s,
            concurrency=profile.concurrency,
            budget_s=profile.budget_s,
            max_cost_usd=None if profile.max_cost_usd is None else float(profile.max_cost_usd),
            models=tuple(profile.accepted_models),
        )

    @property
    def prefilled_tokens(self) -> float:
        """Input tokens the endpoint must prefill per call: cache hits are not computed again."""
        return self.input_tokens * (1 - self.cached_share)

    @property
    def decoded_tokens(self) -> int:
        return self.output_tokens + self.reasoning_tokens

    def cost(self, prices: Prices) -> Decimal | None:
        """USD per task at list prices (benchmarks.money): every call sends its whole input (the
        cached share at the cached price) and pays for reasoning and output at the output price."""
        return self.costs()(prices)

    def costs(self) -> Callable[[Prices], Decimal | None]:
        """`cost` at any prices, the shape's token counts converted once."""
        return task_costs(
            calls=self.calls,
            input_tokens=self.input_tokens,
            output_tokens=self.decoded_tokens,
            cached_share=self.cached_share,
        )

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["models"] = list(self.models)
        return data


def task_seconds(shape: Shape, *, ttft_ms: Seconds, decode_tps: Seconds) -> Seconds:
    """The shape's task time at a TTFT and decode speed (benchmarks.task_time, the agent-loop
    page's formula): `calls` × (TTFT + reasoning and output ÷ decode speed + tool time)."""
    return task_time_s(
        calls=shape.calls,
        ttft_ms=ttft_ms,
        decoded_tokens=shape.decoded_tokens,
        decode_tps=decode_tps,
        tool_s=shape.tool_s,
    )
