"""Synthetic runs and samples of one endpoint, generated as columns with numpy.

The model: TTFT and decode speed follow a daily load cycle (lighter at weekends), per-user decode
falls with concurrency, long contexts add prefill time, a few endpoints slow down for a while,
requests fail now and then (and whole runs during rare outages). Every sample is internally
consistent with docs/design.md §4:
decode_tps = (output_tokens − 1) / ((last_token_ms − ttft_ms) / 1000).
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from .profiles import Profile

DAY_S = 86_400
ERRORS = ("rate_limited", "overloaded", "server_error", "timeout", "stream_broken")
ERROR_P = (0.4, 0.25, 0.15, 0.1, 0.1)
ERROR_STATUS = {"rate_limited": 429, "overloaded": 503, "server_error": 500, "stream_broken": 200}
IDLE_TIMEOUT_MS = 120_000.0


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    workload_id: int
    context_tokens: int
    concurrency: int  # resolved for the endpoint (peak workloads use its peak concurrency)
    repetitions: int
    max_output_tokens: int
    input_tokens: int  # prompt tokens per request


@dataclass(slots=True)
class Batch:
    """Columns of the runs (length R) and samples (length R × k) of one endpoint."""

    runs: dict[str, np.ndarray] = field(default_factory=dict)
    samples: dict[str, np.ndarray] = field(default_factory=dict)
    samples_per_run: int = 0

    @property
    def run_count(self) -> int:
        return len(self.runs["slot"])


def epoch_seconds(moments: list[datetime]) -> np.ndarray:
    return np.array([moment.timestamp() for moment in moments], dtype=np.float64)


def generate(
    profile: Profile,
    *,
    slots: np.ndarray,
    workloads: list[WorkloadSpec],
    samples_per_run: int,
    first_day: float,
    rng: np.random.Generator,
) -> Batch:
    """Runs ordered by slot then workload; sample j of run r is row r × k + j."""
    k = samples_per_run
    slot = np.repeat(slots, len(workloads))
    which = np.tile(np.arange(len(workloads)), len(slots))
    spec = {name: np.array([getattr(w, name) for w in workloads])[which] for name in
            ("workload_id", "context_tokens", "concurrency", "repetitions", "max_output_tokens",
             "input_tokens")}  # fmt: skip
    runs = len(slot)
    hour = (slot % DAY_S) / 3600
    weekday = ((slot // DAY_S) + 3) % 7  # 1970-01-01 was a Thursday; Monday = 0
    load = 0.5 * (1 + np.cos(2 * np.pi * (hour - profile.peak_hour) / 24))
    load = np.where(weekday >= 5, 0.6 * load, load)
    day = (slot - first_day) / DAY_S
    slow = np.ones(runs)
    for start, end, factor in profile.slowdowns:
        slow = np.where((day >= start) & (day < end), factor, slow)
    conc = spec["concurrency"].astype(np.float64)
    decode_run = (
        profile.decode_tps
        * (1 - profile.peak_decode_loss * load)
        * slow
        * conc ** (-profile.batching)
        * rng.lognormal(0, 0.04, runs)
    )
    ttft_run = (
        (
            (profile.ttft_ms * (1 + profile.peak_ttft_gain * load) / np.sqrt(slow))
            + spec["context_tokens"] / profile.prefill_tps * 1000
        )
        * (1 + 0.08 * np.log2(conc))
        * rng.lognormal(0, 0.08, runs)
    )
    batch = Batch(samples_per_run=k)
    batch.runs = {"slot": slot, "load": load, "outage": rng.random(runs) < profile.outage_rate,
                  **spec}  # fmt: skip
    batch.samples = _samples(profile, batch, decode_run, ttft_run, rng)
    return batch


def _samples(
    profile: Profile, batch: Batch, decode_run: np.ndarray, ttft_run: np.ndarray, rng
) -> dict[str, np.ndarray]:
    k, runs = batch.samples_per_run, batch.run_count
    shape = (runs, k)
    per_run = batch.runs
    index = np.tile(np.arange(k), (runs, 1))
    conc = per_run["concurrency"][:, None]
    decode = decode_run[:, None] * rng.lognormal(0, 0.06, shape)
    ttft = ttft_run[:, None] * rng.lognormal(0, 0.12, shape)
    max_out = per_run["max_output_tokens"][:, None]
    tokens = np.clip(np.rint(rng.normal(1900, 150, shape)), 200, max_out)
    reasoning = (
        np.clip(np.rint(rng.normal(600, 150, shape)), 50, tokens - 50)
        if profile.reasoning
        else np.full(shape, np.nan)
    )
    gen_ms = tokens / decode * 1000
    total = ttft + gen_ms
    last = total - rng.uniform(1, 8, shape)
    ttfb = ttft * rng.uniform(0.15, 0.5, shape)
    chunks = np.ceil(tokens / profile.tokens_per_chunk)
    gap = (last - ttft) / np.maximum(chunks - 1, 1)
    round_s = (ttft_run + 2000 / decode_run * 1000)[:, None] / 1000 * 1.1
    cols: dict[str, np.ndarray] = {
        "index": index,
        "started_at": per_run["slot"][:, None] + 0.5 + (index // conc) * round_s + 0.002 * index,
        "connect_ms": np.where(
            index < np.minimum(conc, k), rng.lognormal(np.log(35), 0.3, shape), 0.0
        ),  # fmt: skip
        "ttfb_ms": ttfb,
        "first_event_ms": np.minimum(ttfb + rng.uniform(0.5, 5, shape), ttft),
        "ttft_ms": ttft,
        "ttfa_ms": ttft + np.nan_to_num(reasoning) / decode * 1000,
        "last_token_ms": last,
        "total_ms": total,
        "output_tokens": tokens,
        "reasoning_tokens": reasoning,
        "input_tokens": np.broadcast_to(per_run["input_tokens"][:, None], shape).astype(float),
        "cached_tokens": np.zeros(shape),
        "decode_tps": (tokens - 1) / ((last - ttft) / 1000),
        "tpot_ms": (last - ttft) / (tokens - 1),
        "itl_p50_ms": gap * rng.uniform(0.85, 1.0, shape),
        "itl_p90_ms": gap * rng.uniform(1.2, 1.6, shape),
        "itl_p99_ms": gap * rng.uniform(2.0, 4.0, shape),
        "itl_max_ms": gap * rng.uniform(5, 30, shape),
        "chunks": chunks,
        "tokens_per_chunk": tokens / chunks,
        "output_chars": np.rint(tokens * rng.uniform(3.5, 4.2, shape)),
        "truncated": tokens >= max_out,
        # No synthetic provider reports its own latency (only Bedrock does, in `metadata`).
        "provider_latency_ms": np.full(shape, np.nan),
    }
    _add_errors(profile, cols, per_run, rng)
    # Microsecond resolution, as a measurement has; short numbers keep the writes fast.
    return {
        name: (
            np.round(value, 3) if value.dtype.kind == "f" and name != "started_at" else value
        ).reshape(-1)
        for name, value in cols.items()
    }


def _add_errors(profile: Profile, cols: dict, per_run: dict, rng) -> None:
    """Error samples keep what was measured before the error; speed fields are cleared."""
    shape = cols["ttft_ms"].shape
    rate = profile.error_rate * (1 + 2 * per_run["load"])[:, None]
    failed = (rng.random(shape) < rate) | per_run["outage"][:, None]
    category = rng.choice(len(ERRORS), size=shape, p=ERROR_P)
    category = np.where(per_run["outage"][:, None], 1 + (rng.random(shape) < 0.3), category)
    category = np.where(failed, category, -1)
    cols["error"] = category
    streamed = category == ERRORS.index("stream_broken")
    timed_out = category == ERRORS.index("timeout")
    refused = failed & ~streamed & ~timed_out
    cols["total_ms"] = np.where(
        refused,
        cols["ttfb_ms"],
        np.where(
            timed_out,
            IDLE_TIMEOUT_MS,
            np.where(streamed, cols["ttft_ms"] + 0.4 * (cols["total_ms"] - cols["ttft_ms"]),
                     cols["total_ms"]),
        ),
    )  # fmt: skip
    for name in ("ttfb_ms", "first_event_ms"):
        cols[name] = np.where(timed_out, np.nan, cols[name])
    for name in ("ttft_ms", "ttfa_ms"):
        cols[name] = np.where(refused | timed_out, np.nan, cols[name])
    for name in ("last_token_ms", "output_tokens", "reasoning_tokens", "decode_tps", "tpot_ms",
                 "itl_p50_ms", "itl_p90_ms", "itl_p99_ms", "itl_max_ms", "tokens_per_chunk",
                 "cached_tokens"):  # fmt: skip
        cols[name] = np.where(failed, np.nan, cols[name])
    for name in ("chunks", "output_chars"):
        cols[name] = np.where(failed, 0, cols[name])
    cols["truncated"] = cols["truncated"] & ~failed
    limited = category == ERRORS.index("rate_limited")
    cols["retry_after_s"] = np.where(limited, np.round(rng.uniform(1, 30, shape), 1), np.nan)


def to_datetimes(seconds: np.ndarray) -> list[datetime]:
    return [datetime.fromtimestamp(value, tz=UTC) for value in seconds.tolist()]
