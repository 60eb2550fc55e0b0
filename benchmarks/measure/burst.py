"""N requests at once from one event loop, released together by a start barrier."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import perf_counter_ns

import httpx

from providers.base import EndpointConfig

from .http.transport import make_client
from .measurement import Limits, Measurement
from .request import execute, prepare_request


@dataclass(slots=True)
class BurstResult:
    """Per-request measurements (in prompt order) and the burst's aggregate figures.

    wall_s: from the barrier's release to the end of the last request (seconds).
    throughput_tps: output tokens of the ok samples / wall_s — aggregate, not per user; None
    when no request succeeded.
    """

    samples: list[Measurement]
    wall_s: float
    throughput_tps: float | None


def throughput(samples: Sequence[Measurement], wall_s: float) -> float | None:
    """Sum of output tokens of the ok samples per second of wall time (docs/design.md §4)."""
    ok = [m.output_tokens or 0 for m in samples if m.ok]
    if not ok or wall_s <= 0:
        return None
    return sum(ok) / wall_s


async def measure_burst(
    client: httpx.AsyncClient,
    config: EndpointConfig,
    *,
    prompts: Sequence[str],
    max_tokens: int,
    limits: Limits,
    on_done: Callable[[int, Measurement], None] | None = None,
) -> BurstResult:
    """Send one request per prompt, all at once, and measure each.

    Every request body is built before the barrier, so once released each task goes straight
    to the socket. `on_done(i, m)` runs inside the event loop as request i ends, while others
    are still streaming: keep it cheap (a list append, a queue.put), never a database write.
    The client's pool must hold len(prompts) connections (see make_client).
    """
    if not prompts:
        raise ValueError("a burst needs at least one prompt")
    prepared = [
        prepare_request(client, config, prompt=prompt, max_tokens=max_tokens) for prompt in prompts
    ]
    results: list[Measurement | None] = [None] * len(prepared)
    gate = asyncio.Event()
    all_waiting = asyncio.Event()
    waiting = 0

    async def one(index: int) -> None:
        nonlocal waiting
        waiting += 1
        if waiting == len(prepared):
            all_waiting.set()
        await gate.wait()
        measurement = await execute(client, prepared[index], limits=limits)
        results[index] = measurement
        if on_done is not None:
            on_done(index, measurement)

    # A full collection walks every object the process holds (Django, the app) and can pause
    # the loop for tens of milliseconds mid-stream. Park them outside the collector until the
    # burst ends (unfreeze hands them back, garbage included, to the next full collection).
    gc.freeze()
    try:
        async with asyncio.TaskGroup() as group:
            for index in range(len(prepared)):
                group.create_task(one(index))
            await all_waiting.wait()
            start_ns = perf_counter_ns()
            gate.set()
        wall_s = (perf_counter_ns() - start_ns) / 1e9
    finally:
        gc.unfreeze()
    samples = [m for m in results if m is not None]
    return BurstResult(samples=samples, wall_s=wall_s, throughput_tps=throughput(samples, wall_s))


def run_burst(
    config: EndpointConfig,
    *,
    prompts: Sequence[str],
    max_tokens: int,
    limits: Limits | None = None,
    on_done: Callable[[int, Measurement], None] | None = None,
) -> BurstResult:
    """Synchronous wrapper: a fresh event loop and a client sized to the burst."""
    limits = limits or Limits.from_settings()

    async def main() -> BurstResult:
        async with make_client(limits=limits, max_connections=len(prompts)) as client:
            return await measure_burst(
                client,
                config,
                prompts=prompts,
                max_tokens=max_tokens,
                limits=limits,
                on_done=on_done,
            )

    return asyncio.run(main())
