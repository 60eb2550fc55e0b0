"""Do simulated endpoints measured together read what each reads alone? (issue 34.2)

    python bench/simulator_own_load.py [--reps 7] [--concurrency 4] [--tokens 300]

Two simulated endpoints, A (`sim-gpu`) and B (`sim-wafer`), one simulator process (pinned to
CPU 0, this client to CPU 1 when there are two). Each repetition measures a burst of
`--concurrency` streams on A alone, on B alone, and on both at once (the order rotates, so a
drift of the machine's load does not fall on one arm), with tokspeed's own client
(benchmarks.measure: the decode_tps a run stores). Per repetition and endpoint it prints the
median decode alone and together and their difference in %, three ways:

- client: decode_tps as tokspeed measured it (what a user sees on the board);
- sent: the same formula over the simulator's own send times (`/_sim/requests/{id}`);
- paced: the per-user rate the simulator scheduled the token gaps at (`paced_min_tps` …
  `paced_max_tps`), which depends only on its load counter for that model name; the lowest (all
  n streams of the burst decoding) is compared, the highest depends on how the streams' starts
  and ends fall.

Then, per endpoint, the median and worst difference over the repetitions, beside the difference
one load shared by the whole server would make (from the profile's batch knee). Load average
before and after is printed, and per arm the worst lateness of a token write against its
schedule (`max_lag_ms`): the client and sent figures move with a busy machine's scheduling (the
simulator's loop running late), the paced figure must not move at all.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

import django  # noqa: E402

django.setup()

from accuracy import pinned_simulator  # noqa: E402

from benchmarks.measure import Limits, Measurement, make_client, measure_burst  # noqa: E402
from providers.base import EndpointConfig  # noqa: E402
from providers.simulator.process import SimulatorHandle  # noqa: E402
from providers.simulator.profiles import PROFILES  # noqa: E402

ENDPOINTS = {"A": ("sim-gpu", 200), "B": ("sim-wafer", 150)}  # profile, tps option
LIMITS = Limits(connect_timeout_s=10, idle_timeout_s=60, deadline_s=300)


def model(name: str, tokens: int) -> str:
    profile, tps = ENDPOINTS[name]
    return f"{profile}+tokens={tokens}+tps={tps}+ttft=20"


async def burst(sim: SimulatorHandle, name: str, n: int, tokens: int) -> list[Measurement]:
    config = EndpointConfig(
        base_url=sim.openai_base, protocol="openai_chat", model=model(name, tokens)
    )
    async with make_client(limits=LIMITS, max_connections=n) as client:
        result = await measure_burst(
            client,
            config,
            prompts=[f"own load bench {name} {i}" for i in range(n)],
            max_tokens=tokens,
            limits=LIMITS,
        )
    return result.samples


def figures(sim: SimulatorHandle, samples: list[Measurement]) -> dict[str, float]:
    """Median client and sent decode, lowest/highest paced rate, the worst late token write."""
    failed = [m for m in samples if not m.ok]
    if failed:
        raise SystemExit(f"a request failed: {failed[0].error_category}: {failed[0].error_message}")
    truths = [sim.truth(m.request_id) for m in samples]
    sent = [
        (t["output_tokens"] - 1) / ((t["last_token_ns"] - t["first_token_ns"]) / 1e9)
        for t in truths
    ]
    return {
        "client": statistics.median(m.decode_tps for m in samples),
        "sent": statistics.median(sent),
        "paced_min": min(t["paced_min_tps"] for t in truths),
        "paced_max": max(t["paced_max_tps"] for t in truths),
        "late_ms": max(t["max_lag_ms"] for t in truths),
    }


async def repetition(sim: SimulatorHandle, rep: int, n: int, tokens: int) -> dict:
    """{arm: {endpoint: figures}} for one repetition; the arms' order rotates with `rep`."""
    arms = ["alone A", "alone B", "together"]
    arms = arms[rep % 3 :] + arms[: rep % 3]
    out: dict[str, dict[str, dict[str, float]]] = {"alone": {}, "together": {}}
    for arm in arms:
        if arm == "together":
            a, b = await asyncio.gather(burst(sim, "A", n, tokens), burst(sim, "B", n, tokens))
            out["together"] = {"A": figures(sim, a), "B": figures(sim, b)}
        else:
            name = arm[-1]
            out["alone"][name] = figures(sim, await burst(sim, name, n, tokens))
    return out


def pct(together: float, alone: float) -> float:
    return (together / alone - 1) * 100


def shared_load_pct(name: str, n: int) -> float:
    """What one load for the whole server would do to `name` beside the other's n streams."""
    knee = PROFILES[ENDPOINTS[name][0]].batch_knee
    return pct(1 + (n - 1) / knee, 1 + (2 * n - 1) / knee) if knee else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=300)
    args = parser.parse_args()
    load_before = os.getloadavg()
    diffs: dict[str, dict[str, list[float]]] = {
        name: {"client": [], "sent": [], "paced": []} for name in ENDPOINTS
    }
    print(f"load average before: {' '.join(f'{x:.2f}' for x in load_before)}", flush=True)
    print(f"A = {model('A', args.tokens)}, B = {model('B', args.tokens)}, c = {args.concurrency}")
    with pinned_simulator() as sim:
        for rep in range(args.reps):
            result = asyncio.run(repetition(sim, rep, args.concurrency, args.tokens))
            for name in ENDPOINTS:
                alone, together = result["alone"][name], result["together"][name]
                for kind in ("client", "sent"):
                    diffs[name][kind].append(pct(together[kind], alone[kind]))
                paced_same = alone["paced_min"] == together["paced_min"]  # all n streams on
                diffs[name]["paced"].append(pct(together["paced_min"], alone["paced_min"]))
                print(
                    f"rep {rep + 1} {name}: client {alone['client']:7.2f}"
                    f" → {together['client']:7.2f}"
                    f" tok/s ({diffs[name]['client'][-1]:+.2f} %)"
                    f"  sent {alone['sent']:7.2f} → {together['sent']:7.2f}"
                    f" ({diffs[name]['sent'][-1]:+.2f} %)"
                    f"  paced {alone['paced_min']:g}–{alone['paced_max']:g} →"
                    f" {together['paced_min']:g}–{together['paced_max']:g}"
                    f" ({'equal' if paced_same else 'DIFFERENT'})"
                    f"  sim late ≤ {alone['late_ms']:.0f} / {together['late_ms']:.0f} ms",
                    flush=True,
                )
    print("together vs alone over the repetitions (median / worst |diff|):")
    for name in ENDPOINTS:
        row = "  ".join(
            f"{kind} {statistics.median(values):+.2f} % / {max(map(abs, values)):.2f} %"
            for kind, values in diffs[name].items()
        )
        shared = shared_load_pct(name, args.concurrency)
        print(f"  {name}: {row}   (one shared load would read {shared:+.1f} %)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
