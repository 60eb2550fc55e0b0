"""Seeding for the advice on a custom workload: two endpoints measured on a team's workload (and
ranked the other way round on the standard prompt), one measured on the standard prompt only."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import Permission, User

from advisor.digest import rebuild
from advisor.models import WorkloadProfile
from benchmarks.models import Workload
from tests import advisor_data as seed
from tests import custom_workload_data as text
from tests import dashboard_data as data

# Per endpoint: (TTFT ms, decode tok/s, input tokens) on the custom workload, and (TTFT ms,
# decode tok/s) on the standard prompt. "quick" is the faster on the team's workload, "steady"
# on the standard prompt; "unrun" has never run the team's workload.
ON_WORKLOAD = {"quick": (400.0, 200.0, 5_200), "steady": (1_500.0, 50.0, 6_100)}
ON_BASE = {"quick": (900.0, 60.0), "steady": (300.0, 250.0), "unrun": (300.0, 200.0)}
PRICES = {"quick": (0.6, 0.8), "steady": (0.1, 0.2), "unrun": (0.2, 0.4)}
MODEL = "llama-3.3-70b"


def support_workload() -> Workload:
    """A team's workload whose every piece of text carries the marker text.TEXT_MARK."""
    return Workload.objects.create(
        slug="support-agent",
        name="Support agent",
        system_prompt=text.system_prompt(20_000),
        prompt_suite=text.prompt_suite(12),
        tools=text.tool_schemas(6),
        repetitions=12,
    )


def custom_runs(endpoint, workload: Workload, *, ttft_ms: float, decode_tps: float,
                input_tokens: int, now: datetime, count: int = 8) -> None:  # fmt: skip
    for slot in seed.slots(count, now=now):
        data.run(
            endpoint,
            slot,
            wl=workload,
            ttft_ms=ttft_ms,
            decode_tps=decode_tps,
            input_tokens=input_tokens,
            summary=seed.summary(ttft_ms=ttft_ms, decode_tps=decode_tps),
        )


def world(*, now: datetime = seed.NOW) -> dict[str, Any]:
    """The endpoints, the workload, a profile "support" that names it and a profile "chat" of
    the same shape on the standard workloads; the digest built as `advisor_digest` would."""
    data.default_workloads()
    data.vantage()
    workload = support_workload()
    endpoints = {}
    for slug, (price_in, price_out) in PRICES.items():
        endpoints[slug] = data.endpoint(
            data.provider(f"{slug}co"), slug, model=MODEL, price_in=price_in, price_out=price_out
        )
        ttft, decode = ON_BASE[slug]
        seed.measured(endpoints[slug], ttft_ms=ttft, decode_tps=decode, now=now)
    for slug, (ttft, decode, tokens) in ON_WORKLOAD.items():
        custom_runs(endpoints[slug], workload, ttft_ms=ttft, decode_tps=decode,
                    input_tokens=tokens, now=now)  # fmt: skip
    shape = {"input_tokens": 200, "output_tokens": 500, "budget_s": 10, "accepted_models": [MODEL]}
    support = WorkloadProfile.objects.create(
        slug="support", name="Support replies", workload=workload, **shape
    )
    chat = WorkloadProfile.objects.create(slug="chat", name="Chat", **shape)
    rebuild(now=now)
    return {"workload": workload, "support": support, "chat": chat, **endpoints}


def prompt_reader(username: str = "reader-of-prompts", **fields: Any) -> User:
    """A member holding benchmarks.view_prompt_text (the role that may get the advice)."""
    user = User.objects.create_user(username, **fields)
    user.user_permissions.add(Permission.objects.get(codename="view_prompt_text"))
    return User.objects.get(pk=user.pk)  # a fresh instance: no stale permission cache
