"""Factories of the REST API tests: providers, endpoints, runs and samples with given figures."""

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from benchmarks.buckets import tod_bucket
from benchmarks.models import Run, RunStatus, Sample, Vantage, Workload
from providers.models import Endpoint, Provider


def token_client(user: User) -> APIClient:
    """A client that authenticates the way scripts do: `Authorization: Token <key>`."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def make_provider(slug: str = "acme", **fields: Any) -> Provider:
    defaults = {
        "name": slug.title(),
        "protocol": "openai_chat",
        "base_url": f"https://{slug}.example.com/v1",
    }
    return Provider.objects.create(slug=slug, **(defaults | fields))


def make_endpoint(provider: Provider, slug: str = "acme-fast", **fields: Any) -> Endpoint:
    return Endpoint.objects.create(provider=provider, slug=slug, **({"model": slug} | fields))


def workload(slug: str = "base") -> Workload:
    return Workload.objects.get(slug=slug)  # the default workloads come from migration 0002


def vantage(slug: str = "local") -> Vantage:
    return Vantage.objects.get(slug=slug)


def make_run(
    endpoint: Endpoint,
    slot: datetime,
    *,
    wl: Workload | None = None,
    van: Vantage | None = None,
    status: str = RunStatus.DONE,
    ttft_ms: float = 500.0,
    decode_tps: float = 100.0,
    output_tokens: float = 2000.0,
    ok: int = 5,
    errors: int = 0,
) -> Run:
    """A finished run whose summary medians are the given figures."""
    wl = wl or workload()
    return Run.objects.create(
        endpoint=endpoint,
        workload=wl,
        vantage=van or vantage(),
        slot=slot,
        status=status,
        started_at=slot,
        finished_at=slot + timedelta(minutes=2),
        concurrency=wl.concurrency or endpoint.peak_concurrency,
        repetitions=wl.repetitions,
        context_tokens=wl.context_tokens,
        tod_bucket=tod_bucket(slot),
        input_tokens=100,
        ok_count=ok,
        error_count=errors,
        ttft_p50_ms=ttft_ms,
        ttfa_p50_ms=ttft_ms,
        decode_tps_p50=decode_tps,
        e2e_p50_ms=ttft_ms + output_tokens / decode_tps * 1000,
        output_tokens_p50=output_tokens,
        summary={"samples": ok + errors, "ok": ok, "errors": errors},
    )


def make_sample(run: Run, index: int, **fields: Any) -> Sample:
    """A sample whose timings follow from ttft, tokens and decode speed (ms from t0)."""
    ttft = fields.pop("ttft_ms", 400.0)
    tokens = fields.pop("output_tokens", 200)
    tps = fields.pop("decode_tps", 80.0)
    total = ttft + tokens / tps * 1000
    values = {
        "started_at": run.slot + timedelta(seconds=index),
        "connect_ms": 12.0,
        "ttfb_ms": ttft * 0.5,
        "first_event_ms": ttft * 0.9,
        "ttft_ms": ttft,
        "ttfa_ms": ttft,
        "last_token_ms": total - 3,
        "total_ms": total,
        "output_tokens": tokens,
        "tokens_source": "usage",
        "reasoning_tokens": 0,
        "input_tokens": 120,
        "cached_tokens": 0,
        "decode_tps": tps,
        "tpot_ms": (total - 3 - ttft) / (tokens - 1),
        "itl_p50_ms": 10.0,
        "itl_p90_ms": 14.0,
        "itl_p99_ms": 20.0,
        "itl_max_ms": 31.0,
        "chunks": tokens,
        "tokens_per_chunk": 1.0,
        "finish_reason": "stop",
        "http_status": 200,
        "output_chars": tokens * 4,
        "output_sha256": "ab" * 32,
    }
    return Sample.objects.create(run=run, slot=run.slot, index=index, **(values | fields))


def hours_ago(hours: float) -> datetime:
    return timezone.now() - timedelta(hours=hours)
