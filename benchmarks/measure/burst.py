"""N requests at once from one event loop, released together by a start barrier."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from providers.base import EndpointConfig
from providers.prompt import Prompt

from .http.transport import preconnect
from .measurement import Limits, Measurement
from .request import execute, prepare_request


@dataclass(slots=True)
class BurstResult:
    """Per-request measurements, in prompt order.

    Aggregate figures (wall time, throughput) have one definition, benchmarks.stats.summarize,
    which the stored run summaries use too.
    """

    samples: list[Measurement]


async def measure_burst(
    client: httpx.AsyncClient,
    config: EndpointConfig,
    *,
    prompts: Sequence[str | Prompt],
    max_tokens: int,
    limits: Limits,
    on_done: Callable[[int, Measurement], None] | None = None,
    cold: bool = False,
) -> BurstResult:
    """Send one request per prompt, all at once, and measure each.

    Every request body is built, and (unless `cold`) every connection opened, before the
    barrier, so once released each task goes straight to the socket and no TTFT holds a TCP or
    TLS handshake; `cold` leaves connecting inside the requests (to measure cold starts).
    `on_done(i, m)` runs inside the event loop as request i ends, while others are still
    streaming: keep it cheap (a list append, a queue.put), never a database write.
    The client's pool must hold len(prompts) connections (see make_client).
    """
    if not prompts:
        raise ValueError("a burst needs at least one prompt")
    prepared = [
        prepare_request(client, config, prompt=prompt, max_tokens=max_tokens) for prompt in prompts
    ]
    if not cold:
        await preconnect(client, prepared[0].request.url, len(prepared))
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
            gate.set()
    finally:
        gc.unfreeze()
    return BurstResult(samples=[m for m in results if m is not None])
