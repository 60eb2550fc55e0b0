"""Seeding for advisor tests: endpoints with finished runs whose figures the tests choose."""

from datetime import UTC, datetime, timedelta

from advisor.digest import digest_run, rebuild
from advisor.models import WorkloadProfile
from alerts.models import Subscription, Topic
from tests import dashboard_data as data

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def slots(count: int, *, now: datetime = NOW) -> list[datetime]:
    """`count` slots 8 h apart, the newest 2 h before now (buckets cycle 0–3 unevenly)."""
    return [now - timedelta(hours=2 + 8 * i) for i in reversed(range(count))]


def summary(*, ttft_ms: float, decode_tps: float) -> dict:
    """No spread within the run: p10 = p50 = p90 (hand-checkable task times)."""
    return {
        "ttft_ms": {"p10": ttft_ms, "p50": ttft_ms, "p90": ttft_ms, "n": 5},
        "decode_tps": {"p10": decode_tps, "p50": decode_tps, "p90": decode_tps, "n": 5},
    }


def measured(ep, *, ttft_ms: float, decode_tps: float, count: int = 8, wl=None, now=NOW, **fields):
    wl = wl or data.workload("base")
    return [
        data.run(
            ep,
            slot,
            wl=wl,
            ttft_ms=ttft_ms,
            decode_tps=decode_tps,
            input_tokens=fields.pop("input_tokens", 200) if i == 0 else 200,
            summary=summary(ttft_ms=ttft_ms, decode_tps=decode_tps),
            **fields,
        )
        for i, slot in enumerate(slots(count, now=now))
    ]


def world(*, now: datetime = NOW):
    """Three endpoints of one model at three providers; "fast" and "cheap" measured at the base
    shape, "unmeasured-long" only at base; a chat profile that accepts them all."""
    data.default_workloads()
    data.vantage()
    fast = data.endpoint(data.provider("fastco"), "fast", model="llama-3.3-70b",
                         price_in=0.6, price_out=0.8)  # fmt: skip
    cheap = data.endpoint(data.provider("cheapco"), "cheap", model="llama-3.3-70b",
                          price_in=0.1, price_out=0.2)  # fmt: skip
    lonely = data.endpoint(data.provider("otherco"), "lonely", model="llama-3.3-70b-turbo")
    data.endpoint(data.provider("elsewhere"), "unrelated", model="gpt-4.1")
    measured(fast, ttft_ms=300, decode_tps=250, now=now)
    measured(cheap, ttft_ms=900, decode_tps=60, now=now)
    measured(lonely, ttft_ms=400, decode_tps=150, count=3, now=now)
    profile = WorkloadProfile.objects.create(
        slug="chat",
        name="Chat",
        input_tokens=200,
        output_tokens=500,
        calls=1,
        budget_s=10,
        accepted_models=["llama-3.3-70b"],
        current_endpoint=cheap,
    )
    for email in ("ops@example.com", "lead@example.com"):
        subscribe_to_advice(email, profile)
    rebuild(now=now)  # as `manage.py advisor_digest` would: these runs never went through finish
    return profile, fast, cheap, lonely


def subscribe_to_advice(email: str, profile) -> None:
    """A confirmed subscription to "the advice changed" for one profile (alerts.Subscription)."""
    subscription = Subscription.objects.create(email=email, topics=[Topic.ADVICE], confirmed_at=NOW)
    subscription.profiles.add(profile)


def finished(run):
    """What the run's end asks the advisor to do (advisor.digest_run), done here."""
    digest_run(run.id)
    return run
