"""What a schedule costs per month at the endpoints' list prices (so nobody is surprised)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from providers.models import Endpoint

from .models import Schedule, Workload
from .money import Prices, request_cost
from .prompts import prompt_tokens_estimate
from .schedules import schedule_endpoints, schedule_workloads, slots_per_day

DAYS_PER_MONTH = 30


def input_tokens_estimate(workload: Workload) -> int:
    """Tokens of one request's prompt (nonce + padding + task), at ~4 characters per token."""
    return prompt_tokens_estimate(prompt=workload.prompt, context_tokens=workload.context_tokens)


def request_cost_usd(
    endpoint: Endpoint, *, input_tokens: int, max_output_tokens: int
) -> Decimal | None:
    """Upper bound of one request (benchmarks.money): prompt tokens × input price + max output ×
    output price; None when the endpoint lacks a list price (a missing price is not free)."""
    return request_cost(
        Prices.of(endpoint), input_tokens=input_tokens, output_tokens=max_output_tokens
    )


@dataclass(slots=True)
class MonthlyCost:
    usd: Decimal
    requests: int
    unpriced: list[str] = field(default_factory=list)  # endpoints without a list price

    def __str__(self) -> str:
        text = f"${self.usd:,.2f} / month for {self.requests:,} requests"
        if self.unpriced:
            text += f" (no list price: {', '.join(self.unpriced)})"
        return text


def monthly_cost(schedule: Schedule) -> MonthlyCost:
    """Requests per month × cost per request, summed over the schedule's endpoints × workloads.

    A month is 30 days; output is priced at each workload's max output tokens (an upper bound).
    Endpoints without both list prices add nothing to the sum and are named in `unpriced`.
    """
    slots = Decimal(str(slots_per_day(schedule))) * DAYS_PER_MONTH
    total, requests, unpriced = Decimal(0), Decimal(0), []
    workloads = [(w, input_tokens_estimate(w)) for w in schedule_workloads(schedule)]
    for endpoint in schedule_endpoints(schedule):
        priced = Prices.of(endpoint).known
        if not priced and not endpoint.provider.simulated:  # the simulator costs nothing
            unpriced.append(endpoint.label)
        for workload, input_tokens in workloads:
            per_slot = workload.repetitions * workload.concurrency_for(endpoint)
            requests += slots * per_slot
            per_request = request_cost_usd(
                endpoint, input_tokens=input_tokens, max_output_tokens=workload.max_output_tokens
            )
            if per_request is not None:  # an unpriced endpoint is listed, not summed as free
                total += slots * per_slot * per_request
    cents = total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return MonthlyCost(usd=cents, requests=int(requests), unpriced=unpriced)


def lane_price_multiple(lane_blended: float | None, standard_blended: float | None) -> float | None:
    """How many times the standard lane's blended price a lane costs (None when unpriced)."""
    if not lane_blended or not standard_blended:
        return None
    return lane_blended / standard_blended
