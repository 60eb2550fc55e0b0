"""Runs on demand by a person or a script, within a per-user budget at list prices.

Every trigger is recorded with what it may cost (RunTrigger); a trigger that would take a user's
spending over the last hour or the last 24 hours past its quota is refused, naming the quota.
One user's triggers are serialised by locking the user's row, so two at once cannot both fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_UP, Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from providers.models import Endpoint

from .costs import input_tokens_estimate, request_cost_usd
from .dispatch import queue_run_now
from .models import Run, RunTrigger, Vantage, Workload
from .money import MICRO_USD


@dataclass(frozen=True, slots=True)
class Quota:
    name: str  # "hourly" or "daily"
    setting: str
    window: timedelta
    limit_usd: Decimal


class QuotaExceeded(Exception):
    """The run would take the user past a quota; the message names it and what was spent."""

    def __init__(self, message: str, *, quota: Quota, retry_after_s: int | None) -> None:
        super().__init__(message)
        self.quota = quota
        self.retry_after_s = retry_after_s


def quotas() -> list[Quota]:
    """The quotas in force (a limit of 0 is off)."""
    found = [
        Quota("hourly", "TOKSPEED_TRIGGER_QUOTA_HOUR_USD", timedelta(hours=1),
              Decimal(str(settings.TOKSPEED_TRIGGER_QUOTA_HOUR_USD))),
        Quota("daily", "TOKSPEED_TRIGGER_QUOTA_DAY_USD", timedelta(days=1),
              Decimal(str(settings.TOKSPEED_TRIGGER_QUOTA_DAY_USD))),
    ]  # fmt: skip
    return [quota for quota in found if quota.limit_usd > 0]


def run_cost_usd(endpoint: Endpoint, workload: Workload, *, repetitions: int) -> Decimal:
    """Upper bound of a run at list prices: requests × (prompt + max output) priced per token.

    A real endpoint without a list price counts at TOKSPEED_TRIGGER_UNPRICED_PER_MTOK_USD per
    million tokens, in and out (never as free: its provider may well bill); only the simulator
    costs nothing.
    """
    requests = repetitions * workload.concurrency_for(endpoint)
    unpriced = endpoint.price_input_per_mtok is None and endpoint.price_output_per_mtok is None
    if unpriced and not endpoint.provider.simulated:
        default = Decimal(str(settings.TOKSPEED_TRIGGER_UNPRICED_PER_MTOK_USD))
        endpoint = Endpoint(
            provider=endpoint.provider, price_input_per_mtok=default, price_output_per_mtok=default
        )
    per_request = request_cost_usd(
        endpoint,
        input_tokens=input_tokens_estimate(workload),
        max_output_tokens=workload.max_output_tokens,
    )
    if per_request is None:
        return Decimal(0)
    # Stored with 6 decimals (RunTrigger.cost_usd): round up, so the ledger never undercounts.
    return (requests * per_request).quantize(MICRO_USD, rounding=ROUND_UP)


def check_quotas(*, user_id: int, cost: Decimal, now: datetime) -> None:
    for quota in quotas():
        since = now - quota.window
        recent = RunTrigger.objects.filter(user_id=user_id, created_at__gt=since)
        spent = recent.aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)
        if spent + cost <= quota.limit_usd:
            continue
        raise QuotaExceeded(
            _refusal(quota, spent=spent, cost=cost),
            quota=quota,
            retry_after_s=_retry_after_s(recent, quota=quota, spent=spent, cost=cost, now=now),
        )


def _refusal(quota: Quota, *, spent: Decimal, cost: Decimal) -> str:
    period = "hour" if quota.name == "hourly" else "24 hours"
    return (
        f"{quota.name.capitalize()} run quota reached: ${_usd(spent)} of ${_usd(quota.limit_usd)} "
        f"spent at list prices in the last {period}, and this run may cost ${_usd(cost)} "
        f"({quota.setting})."
    )


def _retry_after_s(
    recent, *, quota: Quota, spent: Decimal, cost: Decimal, now: datetime
) -> int | None:
    """Seconds until enough earlier spending leaves the window for this run to fit (None: never)."""
    if cost > quota.limit_usd:
        return None
    for created_at, trigger_cost in recent.order_by("created_at").values_list(
        "created_at", "cost_usd"
    ):
        spent -= trigger_cost
        if spent + cost <= quota.limit_usd:
            return max(1, int((created_at + quota.window - now).total_seconds()) + 1)
    return None


def _usd(amount: Decimal) -> str:
    return str(amount.quantize(Decimal("0.01"), rounding=ROUND_UP))


def trigger_run(
    *, user, endpoint: Endpoint, workload: Workload, vantage: Vantage, repetitions: int | None
) -> Run:
    """Queue a run now for `user`, within their quotas; raises QuotaExceeded otherwise."""
    repetitions = repetitions or workload.repetitions
    cost = run_cost_usd(endpoint, workload, repetitions=repetitions)
    with transaction.atomic():
        # One user's triggers wait for each other here, so two at once cannot both fit.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        check_quotas(user_id=user.pk, cost=cost, now=timezone.now())
        run = queue_run_now(
            endpoint=endpoint, workload=workload, vantage=vantage, repetitions=repetitions
        )
        RunTrigger.objects.create(run=run, user=user, cost_usd=cost, created_at=run.slot)
    return run
