"""Seeding helpers for dashboard tests: providers, endpoints and finished runs with summaries.

Figures are chosen by the caller; tests derive their expectations from the same inputs.
"""

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from benchmarks.buckets import tod_bucket
from benchmarks.models import Run, RunStatus, Sample, Vantage, Workload
from providers.models import Endpoint, Provider

SLOT_HOURS = (2, 10, 18)  # the default schedule: 3 a day, UTC


def provider(slug: str, *, simulated: bool = False, **fields: Any) -> Provider:
    defaults = {
        "name": slug.replace("-", " ").title(),
        "protocol": "openai_chat",
        "base_url": f"https://{slug}.example.com/v1",
        "simulated": simulated,
    }
    return Provider.objects.create(slug=slug, **(defaults | fields))


def endpoint(
    prov: Provider,
    slug: str,
    *,
    price_in: float | None = 1.0,
    price_out: float | None = 2.0,
    **fields: Any,
) -> Endpoint:
    return Endpoint.objects.create(
        provider=prov,
        slug=slug,
        model=fields.pop("model", slug),
        display_name=fields.pop("display_name", slug.replace("-", " ").title()),
        price_input_per_mtok=price_in,
        price_output_per_mtok=price_out,
        **fields,
    )


# The default workloads of migration 0002 (created here too when tests run without migrations).
WORKLOADS = {
    "base": {"name": "Base (standard prompt)", "context_tokens": 0, "concurrency": 1},
    "long-context": {"name": "Long context", "context_tokens": 30_000, "concurrency": 1},
    "parallel-10": {"name": "Parallel ×10", "context_tokens": 0, "concurrency": 10},
    "peak": {"name": "Peak concurrency", "context_tokens": 0, "concurrency": 0, "repetitions": 1},
}


def workload(slug: str = "base") -> Workload:
    return Workload.objects.get_or_create(slug=slug, defaults=WORKLOADS.get(slug, {"name": slug}))[
        0
    ]


def default_workloads() -> list[Workload]:
    return [workload(slug) for slug in WORKLOADS]


def vantage(slug: str = "local") -> Vantage:
    defaults = {"label": "This machine", "queue": slug, "is_default": slug == "local"}
    return Vantage.objects.get_or_create(slug=slug, defaults=defaults)[0]


def recent_slots(count: int, *, now: datetime | None = None) -> list[datetime]:
    """The `count` most recent default-schedule slots before `now`, oldest first."""
    now = now or timezone.now()
    day = now.replace(minute=0, second=0, microsecond=0)
    slots: list[datetime] = []
    while len(slots) < count:
        for hour in sorted(SLOT_HOURS, reverse=True):
            slot = day.replace(hour=hour)
            if slot < now and len(slots) < count:
                slots.append(slot)
        day -= timedelta(days=1)
    return sorted(slots)


def run(
    ep: Endpoint,
    slot: datetime,
    *,
    wl: Workload | None = None,
    van: Vantage | None = None,
    ttft_ms: float | None = 500.0,
    decode_tps: float | None = 100.0,
    output_tokens: float = 2000.0,
    input_tokens: int | None = 100,
    ok: int = 5,
    errors: int = 0,
    throughput_tps: float | None = None,
    concurrency: int | None = None,
    status: str | None = None,
    summary: dict[str, Any] | None = None,
) -> Run:
    """A finished run whose summary medians are the given figures (e2e derived from them)."""
    wl = wl or workload()
    concurrency = concurrency or wl.concurrency or ep.peak_concurrency
    e2e = ttft_ms + output_tokens / decode_tps * 1000 if ttft_ms and decode_tps else None
    if status is None:
        status = RunStatus.FAILED if ok == 0 else RunStatus.PARTIAL if errors else RunStatus.DONE
    return Run.objects.create(
        endpoint=ep,
        workload=wl,
        vantage=van or vantage(),
        slot=slot,
        status=status,
        started_at=slot,
        finished_at=slot + timedelta(minutes=2),
        concurrency=concurrency,
        repetitions=wl.repetitions,
        context_tokens=wl.context_tokens,
        tod_bucket=tod_bucket(slot),
        input_tokens=input_tokens,
        ok_count=ok,
        error_count=errors,
        ttft_p50_ms=ttft_ms if ok else None,
        ttfa_p50_ms=ttft_ms if ok else None,
        decode_tps_p50=decode_tps if ok else None,
        e2e_p50_ms=e2e if ok else None,
        output_tokens_p50=output_tokens if ok else None,
        throughput_tps=throughput_tps,
        summary=summary or {},
    )


def series(
    ep: Endpoint,
    *,
    ttft_ms: Sequence[float],
    decode_tps: Sequence[float],
    wl: Workload | None = None,
    slots: Sequence[datetime] | None = None,
    **fields: Any,
) -> list[Run]:
    """One run per slot (the most recent slots by default) with the given medians in order."""
    slots = list(slots or recent_slots(len(ttft_ms)))
    return [
        run(ep, slot, wl=wl, ttft_ms=t, decode_tps=d, **fields)
        for slot, t, d in zip(slots, ttft_ms, decode_tps, strict=True)
    ]


def samples(
    run_: Run,
    *,
    count: int = 3,
    start: int = 0,
    ttft_ms: float = 400.0,
    decode_tps: float = 80.0,
    tokens: int = 200,
    error_category: str = "",
) -> list[Sample]:
    """Samples for the run page's waterfall: connect, headers, first token, decode."""
    made = []
    for index in range(start, start + count):
        total = ttft_ms + tokens / decode_tps * 1000
        made.append(
            Sample.objects.create(
                run=run_,
                slot=run_.slot,
                index=index,
                started_at=run_.slot + timedelta(seconds=index),
                connect_ms=30.0 if index == 0 else 0.0,
                ttfb_ms=ttft_ms * 0.6,
                first_event_ms=ttft_ms * 0.9,
                ttft_ms=None if error_category else ttft_ms,
                ttfa_ms=None if error_category else ttft_ms,
                last_token_ms=None if error_category else total - 5,
                total_ms=ttft_ms * 0.6 if error_category else total,
                output_tokens=None if error_category else tokens,
                tokens_source="usage",
                decode_tps=None if error_category else decode_tps,
                chunks=0 if error_category else tokens,
                http_status=500 if error_category else 200,
                error_category=error_category,
                error_message="server error" if error_category else "",
                finish_reason="" if error_category else "stop",
            )
        )
    return made


# name, provider (simulated?), prices in/out, TTFT ms, decode tok/s per user, roofline hints
DEMO = (
    ("wafer-llama-70b", "wafer", False, 0.60, 1.20, 210.0, 760.0, {}),
    (
        "gpu-llama-70b",
        "gpucloud",
        False,
        0.40,
        0.80,
        620.0,
        72.0,
        {
            "active_params_b": 70,
            "bytes_per_param": 2,
            "chips": 8,
            "chip_bandwidth_tbps": 3.35,
            "hardware": "H100",
        },
    ),
    ("frontier-large", "frontierlab", False, 3.00, 15.00, 900.0, 65.0, {}),
    ("sim-gpu", "simulator", True, 0.50, 1.50, 600.0, 70.0, {}),
)


def demo(*, slots: int = 9, with_samples: bool = True) -> dict[str, Endpoint]:
    """A small, realistic board: base, long-context, ×10 and peak runs for four endpoints,
    with a little jitter so spreads are visible and a slower evening bucket."""
    default_workloads()
    vantage()
    made: dict[str, Endpoint] = {}
    when = recent_slots(slots)
    for position, (slug, prov, simulated, p_in, p_out, ttft, tps, hints) in enumerate(DEMO):
        ep = endpoint(
            provider(prov, simulated=simulated), slug, price_in=p_in, price_out=p_out, **hints
        )
        made[slug] = ep
        for i, slot in enumerate(when):
            jitter = 1 + ((i * 7 + position * 3) % 5 - 2) / 40  # ±5 %, deterministic
            evening = 1.15 if slot.hour == 18 else 1.0
            summary = {
                "ttft_ms": {"p10": ttft * jitter * 0.9, "p90": ttft * jitter * 1.25},
                "decode_tps": {"p10": tps * 0.9 / jitter, "p90": tps * 1.08 / jitter},
            }
            errors = 1 if (i + position) % 7 == 0 else 0
            if errors:
                summary["errors_by_category"] = {"rate_limited": errors}
            base_run = run(
                ep,
                slot,
                ttft_ms=ttft * jitter * evening,
                decode_tps=tps / jitter,
                ok=5 - errors,
                errors=errors,
                summary=summary,
            )
            run(
                ep,
                slot,
                wl=workload("long-context"),
                ttft_ms=ttft * jitter * 4 + 1500,
                decode_tps=tps * 0.9 / jitter,
                input_tokens=30_150,
            )
            if i % 3 == 0:
                run(
                    ep,
                    slot,
                    wl=workload("parallel-10"),
                    ttft_ms=ttft * 1.6,
                    decode_tps=tps * 0.7,
                    throughput_tps=tps * 0.7 * 10,
                )
                run(
                    ep,
                    slot,
                    wl=workload("peak"),
                    ttft_ms=ttft * 3,
                    decode_tps=tps * 0.3,
                    throughput_tps=tps * 0.3 * ep.peak_concurrency,
                )
            if with_samples and i == len(when) - 1:
                samples(base_run, count=4, ttft_ms=ttft, decode_tps=tps, tokens=400)
                samples(base_run, count=1, start=4, ttft_ms=ttft, error_category="server_error")
                Run.objects.filter(pk=base_run.pk).update(
                    ok_count=4, error_count=1, status="partial"
                )
    return made
