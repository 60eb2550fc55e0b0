"""manage.py find_saturation [--token-ms 10] [--tokens 200] [--max-concurrency 1024]
[--budget-s 45] [--json]

At which concurrency does this machine, as a client, stop keeping up with the streams it reads?
Past it, streams are *saturated* (docs/design.md §4, "Client saturation"): their events wait in
the socket buffer, their ITL is withheld and their decode may read low. The command starts the
built-in simulator on loopback (its own process, on the same CPUs), streams rounds of N requests
at once at --token-ms a token per stream, doubling N from 1 until a stream is saturated, then
halves the gap between the last level that kept up and the first that did not while the time
budget lasts. It prints one line per level and the answer; measure below that concurrency, or
give the client more CPU. The simulator takes CPU too, so on a machine of its own the client
keeps up a little further.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmarks.measure import Limits, Network, make_client, measure_burst
from benchmarks.measure.timing import WITHHELD_TAIL
from providers.base import EndpointConfig
from providers.simulator.process import SimulatorHandle, start_simulator

from .speedtest import bounded_int

# sim-wafer's per-user rate falls as tps / (1 + (n - 1) / 32) with n streams (its batching
# model); the rate asked of it is raised by that factor so every stream runs at --token-ms.
PROFILE, BATCH_KNEE = "sim-wafer", 32
BISECT_STEPS = 3


@dataclass(frozen=True, slots=True)
class Level:
    """One round at `concurrency`: how many of its ok streams were saturated (most events in
    shared reads, or the ITL median unknown), how many others had only their ITL tail withheld (a
    burst may hide a long gap), and the share of their text events that arrived in shared reads."""

    concurrency: int
    ok: int
    saturated: int
    tail_withheld: int
    coalesced_share: float

    @property
    def kept_up(self) -> bool:
        return self.ok == self.concurrency and self.saturated == 0


def ramp(
    measure: Callable[[int], Level], *, max_concurrency: int, out_of_time: Callable[[], bool]
) -> tuple[list[Level], int | None, int | None]:
    """Levels measured (in order), the highest that kept up and the lowest that did not (None
    when none did or none failed). Doubles from 1, then bisects BISECT_STEPS times."""
    levels: list[Level] = []
    good: int | None = None
    bad: int | None = None
    concurrency = 1
    while not out_of_time():
        level = measure(concurrency)
        levels.append(level)
        if not level.kept_up:
            bad = concurrency
            break
        good = concurrency
        if concurrency >= max_concurrency:
            break
        concurrency = min(concurrency * 2, max_concurrency)
    for _ in range(BISECT_STEPS):
        if good is None or bad is None or bad - good < 2 or out_of_time():
            break
        middle = (good + bad) // 2
        level = measure(middle)
        levels.append(level)
        good, bad = (middle, bad) if level.kept_up else (good, middle)
    return levels, good, bad


async def _round(sim: SimulatorHandle, concurrency: int, token_ms: float, tokens: int) -> Level:
    tps = 1000 / token_ms * (1 + (concurrency - 1) / BATCH_KNEE)
    model = f"{PROFILE}+tokens={tokens}+tps={tps:.3f}+ttft=20"
    config = EndpointConfig(base_url=sim.openai_base, protocol="openai_chat", model=model)
    limits = Limits(connect_timeout_s=30, idle_timeout_s=60, deadline_s=300)
    async with make_client(
        limits=limits, max_connections=concurrency, network=Network(proxy="")
    ) as client:
        burst = await measure_burst(
            client,
            config,
            prompts=[f"saturation probe {i}" for i in range(concurrency)],
            max_tokens=tokens,
            limits=limits,
        )
    ok = [m for m in burst.samples if m.ok]
    events = sum(m.chunks for m in ok)
    return Level(
        concurrency=concurrency,
        ok=len(ok),
        saturated=sum(m.saturated for m in ok),
        tail_withheld=sum(m.itl_withheld == WITHHELD_TAIL for m in ok),
        coalesced_share=sum(m.coalesced_events for m in ok) / events if events else 0.0,
    )


class Command(BaseCommand):
    help = "Find the concurrency at which this machine, as a client, falls behind the streams."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--token-ms",
            type=float,
            default=10.0,
            help="Time between tokens of each stream, ms (default 10: 100 tok/s per user).",
        )
        parser.add_argument("--tokens", type=bounded_int(20, 5000), default=200)
        parser.add_argument("--max-concurrency", type=bounded_int(1, 4096), default=1024)
        parser.add_argument(
            "--budget-s",
            type=bounded_int(1, 3600),
            default=45,
            help="Start no new level after this many seconds (default 45).",
        )
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")

    def handle(self, *args: Any, **options: Any) -> None:
        token_ms = options["token_ms"]
        if not 0.05 <= token_ms <= 1000:
            raise CommandError("--token-ms must be between 0.05 and 1000")
        as_json, started = options["json"], time.monotonic()

        def out_of_time() -> bool:
            return time.monotonic() - started > options["budget_s"]

        sim = start_simulator()
        try:

            def measure(concurrency: int) -> Level:
                level = asyncio.run(_round(sim, concurrency, token_ms, options["tokens"]))
                if not as_json:
                    self.stdout.write(_line(level))
                return level

            if not as_json:
                self.stdout.write(
                    f"find_saturation · simulator on loopback · {token_ms:g} ms a token "
                    f"({1000 / token_ms:.0f} tok/s per stream) · {options['tokens']} tokens"
                )
            levels, good, bad = ramp(
                measure, max_concurrency=options["max_concurrency"], out_of_time=out_of_time
            )
        finally:
            sim.stop()
        answer = {"token_ms": token_ms, "kept_up_to": good, "saturated_from": bad}
        if as_json:
            self.stdout.write(json.dumps({**answer, "levels": [asdict(lv) for lv in levels]}))
        else:
            self.stdout.write(_answer(good, bad, token_ms, options["max_concurrency"]))


def _line(level: Level) -> str:
    return (
        f"  concurrency {level.concurrency:>5}: saturated {level.saturated} of {level.ok} ok "
        f"streams, ITL tail withheld (a burst) in {level.tail_withheld}, "
        f"{level.coalesced_share * 100:.0f} % of events in shared reads"
        f"{'' if level.kept_up else '  ← fell behind'}"
    )


def _answer(good: int | None, bad: int | None, token_ms: float, most: int) -> str:
    pace = f"at {token_ms:g} ms a token"
    if good is None:
        return f"this machine fell behind even one stream {pace}: measure on a faster client"
    if bad is None:
        reached = "the highest concurrency tried" if good == most else "before the time ran out"
        return f"this machine kept up with {good} concurrent streams {pace} ({reached})"
    return (
        f"this machine keeps up with {good} concurrent streams {pace}; at {bad} it fell behind: "
        f"measure below {bad} (or give the client more CPU) for honest ITL and decode"
    )
