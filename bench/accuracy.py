"""How exact is the measurement? Client figures against the simulator's recorded send times.

    python bench/accuracy.py [--quick] [--levels 1,16,128,256] [--tokens 2000] [--profile]
                             [--proxy]

The simulator runs in its own process pinned to CPU 0, this client on CPU 1 (when the machine
has two or more). Replies are 2,000 tokens from profile `sim-wafer` (~750 tok/s per user at
concurrency 1, TTFT ~200 ms; per-user speed falls with concurrency by the simulator's batching
model). Per concurrency level it prints:

- TTFT error p50 / p99 (ms): client ttft_ms minus the simulator's first-token send time, both
  read from CLOCK_MONOTONIC (time.perf_counter_ns) relative to the client's t0.
- decode error (%): client decode_tps against the same docs/design.md §4 formula applied to the
  simulator's send times ((output_tokens − 1) / (last token − first token)); median and worst
  |error|.
- coalesced: share of text events that arrived in a network read shared with another (no
  inter-token gap is measured for them), and how many samples were flagged saturated.
- client CPU seconds per 1,000 text events (getrusage of this process around the bursts only).
- peak RSS of this process (MiB).

Targets on a 2-core machine: TTFT error p50 ≤ 1 ms at c=1, ≤ 3 ms at c=16, ≤ 25 ms at c=128;
decode error (median) ≤ 1 % at every level. A level is marked OK when it meets them and no
request failed.

--saturated runs the cases where the client cannot keep up (c = 512 at ~10 ms a token, c = 128 at
~1.3 ms), then held-out cases at other rates and concurrencies, and compares each request's ITL
p50 and p99 with the same percentiles of the simulator's own gaps between text events. Per case
it prints n, how many streams were saturated, the share of events coalesced, and per figure the
median and worst |error| over the requests that report it and how many withheld it (bursts left
it unknown: benchmarks/measure/timing.py). A case is OK only when every reported figure is
within 5 % of its truth.

--proxy also runs every level through a real HTTP proxy on loopback (proxy.py, from PyPI,
pinned with the simulator): each stream goes through a CONNECT tunnel. Its "TTFT error" then
includes the proxy's own forwarding time, which every client behind that proxy pays too.

Where the error comes from: each read carries the kernel's receive stamp, so a busy client does
not delay it; but when this process is starved of CPU long enough for several packets of one
stream to queue, the kernel merges them and keeps only the newest stamp, and the earlier events
inherit it. On a machine shared with other work, p99 shows exactly that.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import resource
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")

import django  # noqa: E402

django.setup()

from botocore.credentials import Credentials  # noqa: E402

from benchmarks.measure import (  # noqa: E402
    Limits,
    Measurement,
    Network,
    make_client,
    measure_burst,
)
from benchmarks.stats import percentile  # noqa: E402
from providers.aws_auth import SigV4Credential  # noqa: E402
from providers.base import EndpointConfig  # noqa: E402
from providers.simulator.cloud_auth import TEST_ACCESS_KEY, TEST_SECRET_KEY  # noqa: E402
from providers.simulator.process import SimulatorHandle, start_simulator  # noqa: E402

PROFILE = "sim-wafer"
TARGET_TTFT_P50_MS = {1: 1.0, 16: 3.0, 128: 25.0}
TARGET_DECODE_PCT = 1.0
TARGET_ITL_PCT = 5.0
# (concurrency, model options, label): per-user speed falls with concurrency in the simulator's
# batching model (tps / (1 + (n - 1) / 32)), so these rates give ~10 ms and ~1.3 ms per token.
SATURATED_CASES = (
    (512, "tps=1700+ttft=50", "c=512 at ~10 ms a token"),
    (128, "tps=3800+ttft=50", "c=128 at ~1.3 ms a token"),
)
# Held out from tuning ITL_KNOWN_WITHIN (benchmarks/measure/timing.py): from a client that keeps
# up (few bursts) to one that falls far behind, at other rates and concurrencies.
HELD_OUT_CASES = (
    (32, "tps=400+ttft=50", "c=32 at ~4.9 ms a token"),
    (64, "tps=300+ttft=50", "c=64 at ~9.9 ms a token"),
    (128, "tps=300+ttft=50", "c=128 at ~17 ms a token"),
    (192, "tps=1300+ttft=50", "c=192 at ~5.4 ms a token"),
    (256, "tps=400+ttft=50", "c=256 at ~22 ms a token"),
    (384, "tps=500+ttft=50", "c=384 at ~26 ms a token"),
    (448, "tps=1500+ttft=50", "c=448 at ~10 ms a token"),
    (48, "tps=5000+ttft=50", "c=48 at ~0.5 ms a token"),
)


@contextmanager
def pinned_simulator() -> SimulatorHandle:
    """The simulator on CPU 0 (inherited from this process at spawn), this process on CPU 1."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        os.sched_setaffinity(0, {cpus[0]})
    handle = start_simulator()
    if len(cpus) >= 2:
        os.sched_setaffinity(0, {cpus[1]})
    try:
        yield handle
    finally:
        handle.stop()


@contextmanager
def pinned_proxy() -> str:
    """proxy.py on a free loopback port, on the simulator's CPU; yields its URL."""
    cpus = sorted(os.sched_getaffinity(0))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy", "--hostname", "127.0.0.1", "--port", str(port)]
        + ["--num-workers", "1", "--num-acceptors", "1", "--log-level", "e"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    if len(cpus) >= 2:
        os.sched_setaffinity(process.pid, {cpus[0]})
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def bench_config(sim: SimulatorHandle, protocol: str, tokens: int) -> EndpointConfig:
    """SSE (OpenAI Chat) or Bedrock's binary event stream, SigV4-signed with the test key."""
    model = f"{PROFILE}+tokens={tokens}"
    if protocol == "bedrock_converse":
        credential = SigV4Credential("us-east-1", Credentials(TEST_ACCESS_KEY, TEST_SECRET_KEY))
        return EndpointConfig(
            base_url=sim.base_url, protocol=protocol, model=model, credential=credential
        )
    return EndpointConfig(base_url=sim.openai_base, protocol=protocol, model=model)


async def run_level(
    sim: SimulatorHandle,
    concurrency: int,
    rounds: int,
    tokens: int,
    network: Network,
    protocol: str = "openai_chat",
) -> tuple[list[Measurement], float]:
    """`rounds` bursts of `concurrency` requests; returns the samples and client CPU seconds."""
    limits = Limits(connect_timeout_s=10, idle_timeout_s=60, deadline_s=300)
    config = bench_config(sim, protocol, tokens)
    samples: list[Measurement] = []
    cpu = 0.0
    async with make_client(limits=limits, max_connections=concurrency, network=network) as client:
        for _ in range(rounds):
            before = cpu_seconds()
            burst = await measure_burst(
                client,
                config,
                prompts=[f"accuracy bench {i}" for i in range(concurrency)],
                max_tokens=tokens,
                limits=limits,
            )
            cpu += cpu_seconds() - before
            samples.extend(burst.samples)
    return samples, cpu


def report(
    sim: SimulatorHandle, concurrency: int, samples: list[Measurement], cpu: float, path: str
) -> bool:
    ttft_errors: list[float] = []
    decode_errors: list[float] = []
    lags: list[float] = []
    failed = [m for m in samples if not m.ok]
    for m in samples:
        if not m.ok:
            continue
        truth = sim.truth(m.request_id)
        ttft_errors.append(m.ttft_ms - (truth["first_token_ns"] - m.t0_ns) / 1e6)
        window_s = (truth["last_token_ns"] - truth["first_token_ns"]) / 1e9
        true_tps = (truth["output_tokens"] - 1) / window_s
        decode_errors.append(abs(m.decode_tps - true_tps) / true_tps * 100)
        lags.append(truth["max_lag_ms"])
    if not ttft_errors:  # nothing to compare: say why instead of failing on empty lists
        first = f"{failed[0].error_category}: {failed[0].error_message}" if failed else "none"
        print(f"{path:<6} c={concurrency:<4} n={len(samples):<4} no request succeeded: {first}")
        return False
    events = sum(m.chunks for m in samples)
    coalesced_pct = sum(m.coalesced_events for m in samples) / max(events, 1) * 100
    saturated = sum(m.saturated for m in samples)
    ttft_errors.sort()
    decode_errors.sort()
    p50, p99 = percentile(ttft_errors, 50), percentile(ttft_errors, 99)
    decode_p50, decode_max = percentile(decode_errors, 50), decode_errors[-1]
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    target = TARGET_TTFT_P50_MS.get(concurrency)
    ok = (target is None or p50 <= target) and decode_p50 <= TARGET_DECODE_PCT and not failed
    print(
        f"{path:<6} c={concurrency:<4} n={len(samples):<4}"
        f" TTFT error p50 {p50:7.2f} ms  p99 {p99:7.2f} ms"
        f"{f' (target p50 ≤ {target:g})' if target else '':<20}"
        f"  decode error p50 {decode_p50:5.2f} %  max {decode_max:5.2f} %"
        f"  CPU {cpu / events * 1000:6.3f} s/1k events  peak RSS {rss_mib:6.1f} MiB"
        f"  coalesced {coalesced_pct:5.1f} % (saturated {saturated})"
        f"  sim max lag {max(lags):6.1f} ms"
        f"  {'OK' if ok else 'MISSED'}{f'  errors: {len(failed)}' if failed else ''}",
        flush=True,
    )
    return ok


def true_itl(truth: dict) -> dict[str, float] | None:
    """p50 and p99 in ms of the simulator's gaps between consecutive text-carrying writes."""
    stamps = [e["t_ns"] for e in truth["events"] if e["kind"] == "text" and e["tokens"]]
    gaps = sorted((b - a) / 1e6 for a, b in zip(stamps, stamps[1:], strict=False))
    if not gaps:
        return None
    return {"p50": percentile(gaps, 50), "p99": percentile(gaps, 99)}


def itl_errors(sim: SimulatorHandle, samples: list[Measurement]) -> dict[str, list[float | None]]:
    """Per figure, each ok request's |error| (%) against its truth, None where withheld."""
    errors: dict[str, list[float | None]] = {"p50": [], "p99": []}
    for m in samples:
        truth = true_itl(sim.truth(m.request_id)) if m.ok else None
        if truth is None:
            continue
        for name, value in (("p50", m.itl_p50_ms), ("p99", m.itl_p99_ms)):
            errors[name].append(
                None if value is None else abs(value - truth[name]) / truth[name] * 100
            )
    return errors


def report_itl(sim: SimulatorHandle, label: str, samples: list[Measurement]) -> bool:
    """Per figure: median and worst |error| over the requests that report it, and how many
    withheld it. OK only when every reported figure is within TARGET_ITL_PCT of its truth."""
    errors = itl_errors(sim, samples)
    if not errors["p50"]:
        print(f"{label}: no request succeeded", flush=True)
        return False
    ok = True
    columns = []
    for name, values in errors.items():
        reported = sorted(v for v in values if v is not None)
        withheld = len(values) - len(reported)
        if reported:
            ok &= reported[-1] <= TARGET_ITL_PCT
            columns.append(
                f"ITL {name} |error| median {percentile(reported, 50):5.1f} % worst "
                f"{reported[-1]:6.1f} % (withheld {withheld:<4})"
            )
        else:
            columns.append(f"ITL {name} withheld in all {withheld:<4}{'':22}")
    coalesced = sum(m.coalesced_events for m in samples) / max(sum(m.chunks for m in samples), 1)
    print(
        f"{label:<30} n={len(errors['p50']):<4} saturated {sum(m.saturated for m in samples):<4}"
        f" coalesced {coalesced * 100:5.1f} %  {'   '.join(columns)}"
        f"  {'OK' if ok else 'MISSED'} (every reported figure ≤ {TARGET_ITL_PCT:g} %)",
        flush=True,
    )
    return ok


def run_saturated(sim: SimulatorHandle, tokens: int) -> bool:
    ok = True
    for cases, heading in (
        (SATURATED_CASES, "the cases of issue 33 (the rule was tuned on these and others)"),
        (HELD_OUT_CASES, "held out: rates and concurrencies the rule was not tuned on"),
    ):
        print(f"-- {heading}", flush=True)
        for concurrency, options, label in cases:
            model = f"{PROFILE}+tokens={tokens}+{options}"
            config = EndpointConfig(base_url=sim.openai_base, protocol="openai_chat", model=model)
            samples = asyncio.run(burst_of(config, concurrency))
            ok &= report_itl(sim, label, samples)
    return ok


async def burst_of(config: EndpointConfig, concurrency: int) -> list[Measurement]:
    limits = Limits(connect_timeout_s=30, idle_timeout_s=120, deadline_s=600)
    network = Network(proxy="")
    async with make_client(limits=limits, max_connections=concurrency, network=network) as client:
        burst = await measure_burst(
            client,
            config,
            prompts=[f"saturation bench {i}" for i in range(concurrency)],
            max_tokens=config_tokens(config),
            limits=limits,
        )
    return burst.samples


def config_tokens(config: EndpointConfig) -> int:
    return int(config.model.split("tokens=")[1].split("+")[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (development)")
    parser.add_argument("--levels", default="1,16,128,256", help="concurrency levels")
    parser.add_argument("--tokens", type=int, default=2000, help="reply length in tokens")
    parser.add_argument("--profile", action="store_true", help="cProfile the client, top 25")
    parser.add_argument("--proxy", action="store_true", help="also through a loopback proxy")
    parser.add_argument(
        "--saturated", action="store_true", help="only the saturated ITL cases (c=512, c=128)"
    )
    parser.add_argument(
        "--protocols",
        default="openai_chat,bedrock_converse",
        help="openai_chat (SSE) and/or bedrock_converse (binary event stream)",
    )
    args = parser.parse_args()
    levels = [int(level) for level in args.levels.split(",")]
    print(
        f"tokspeed accuracy bench: simulated profile {PROFILE}, {args.tokens}-token replies, "
        f"{args.protocols}, CPUs {sorted(os.sched_getaffinity(0))}",
        flush=True,
    )
    all_ok = True
    profiler = cProfile.Profile() if args.profile else None
    if args.saturated:
        with pinned_simulator() as sim:
            return 0 if run_saturated(sim, min(args.tokens, 300)) else 1
    with pinned_simulator() as sim:
        paths = [("direct", Network(proxy=""))]
        with contextlib.ExitStack() as stack:
            if args.proxy:
                paths.append(("proxy", Network(proxy=stack.enter_context(pinned_proxy()))))
            for path, network in paths:
                for protocol in args.protocols.split(","):
                    print(f"-- {path}, {protocol}", flush=True)
                    for concurrency in levels:
                        quick = args.quick
                        rounds = (3 if quick else 5) if concurrency == 1 else (1 if quick else 2)
                        if profiler:
                            profiler.enable()
                        samples, cpu = asyncio.run(
                            run_level(sim, concurrency, rounds, args.tokens, network, protocol)
                        )
                        if profiler:
                            profiler.disable()
                        all_ok &= report(sim, concurrency, samples, cpu, path)
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
