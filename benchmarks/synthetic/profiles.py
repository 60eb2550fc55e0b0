"""Synthetic endpoints: a "true" speed profile per endpoint, and the rows that carry it.

Every provider created here is flagged `simulated`, named "Synthetic …", disabled (no schedule
ever sends a request to it) and points at a `.invalid` host (RFC 6761: never resolves), so
nobody mistakes seeded history for a measurement.
"""

from dataclasses import dataclass

import numpy as np

from providers.models import Endpoint, Protocol, Provider

SLUG_PREFIX = "synthetic-"
BASE_URL = "http://synthetic.invalid/v1"


@dataclass(frozen=True, slots=True)
class Profile:
    """The truth behind one synthetic endpoint (times in ms, speeds in tokens/s)."""

    ttft_ms: float  # base TTFT at a quiet hour
    decode_tps: float  # per-user decode at concurrency 1, quiet hour
    prefill_tps: float  # long-context TTFT adds context_tokens / prefill_tps
    peak_hour: float  # UTC hour of heaviest load
    peak_decode_loss: float  # fraction of decode lost at the peak hour
    peak_ttft_gain: float  # fractional TTFT increase at the peak hour
    batching: float  # per-user decode ∝ concurrency^-batching
    error_rate: float  # per request, at a quiet hour
    outage_rate: float  # per run: every request fails
    tokens_per_chunk: float
    reasoning: bool
    slowdowns: tuple[tuple[float, float, float], ...]  # (first day, last day, decode factor)


def make_profile(rng: np.random.Generator, *, days: int) -> Profile:
    """A plausible endpoint: GPU-class (~30–150 tok/s) or wafer-class (~400–1500 tok/s)."""
    wafer = rng.random() < 0.12
    decode = rng.uniform(400, 1500) if wafer else float(rng.lognormal(np.log(70), 0.45))
    slowdowns = []
    if rng.random() < 0.15:  # a few endpoints get slower for a while (or for good)
        start = float(rng.uniform(0.2, 0.9) * days)
        length = float(rng.choice([rng.uniform(2, 20), days]))
        slowdowns.append((start, start + length, float(rng.uniform(0.45, 0.8))))
    return Profile(
        ttft_ms=float(rng.lognormal(np.log(180 if wafer else 550), 0.5)),
        decode_tps=float(decode),
        prefill_tps=float(rng.uniform(4_000, 60_000)),
        peak_hour=float(rng.normal(16, 2.5) % 24),
        peak_decode_loss=float(rng.uniform(0.02, 0.35)),
        peak_ttft_gain=float(rng.uniform(0.05, 0.8)),
        batching=float(rng.uniform(0.08, 0.35)),
        error_rate=float(rng.uniform(0.001, 0.03)),
        outage_rate=float(rng.uniform(0, 0.004)),
        tokens_per_chunk=float(rng.choice([1.0, 1.0, 1.0, 3.0, 5.0])),
        reasoning=bool(rng.random() < 0.15),
        slowdowns=tuple(slowdowns),
    )


def ensure_endpoints(count: int, rng: np.random.Generator) -> list[Endpoint]:
    """`count` synthetic endpoints (created once, reused by later seeds), one per provider."""
    endpoints = []
    for number in range(1, count + 1):
        slug = f"{SLUG_PREFIX}{number:03d}"
        provider, _ = Provider.objects.update_or_create(
            slug=slug,
            defaults={
                "name": f"Synthetic {number:03d}",
                "protocol": Protocol.OPENAI_CHAT,
                "base_url": BASE_URL,
                "api_key_env": "",
                "enabled": False,
                "simulated": True,
            },
        )
        price_out = float(np.round(rng.lognormal(np.log(2.0), 1.0), 2))
        hints = _roofline_hints(rng) if rng.random() < 0.3 else {}
        endpoint, _ = Endpoint.objects.update_or_create(
            slug=slug,
            defaults={
                "provider": provider,
                "model": f"synthetic-model-{number:03d}",
                "display_name": f"Synthetic model {number:03d}",
                "price_input_per_mtok": round(price_out / rng.uniform(2, 5), 3),
                "price_output_per_mtok": price_out,
                "peak_concurrency": int(rng.choice([16, 32, 64, 128])),
                **hints,
            },
        )
        endpoints.append(endpoint)
    return endpoints


def _roofline_hints(rng: np.random.Generator) -> dict:
    return {
        "active_params_b": float(rng.choice([8, 17, 32, 70, 405])),
        "bytes_per_param": float(rng.choice([1.0, 2.0])),
        "hardware": "H100 SXM (synthetic)",
        "chips": int(rng.choice([1, 2, 4, 8])),
        "chip_bandwidth_tbps": 3.35,
    }
