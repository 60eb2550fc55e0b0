"""read_side.py --scales 1,2,4: the same reads at several sizes of history, and how they grow.

Each scale runs read_side.py in a process of its own (Django binds one database per process) on
DATABASE_<n>x with n × --endpoints endpoints, grown from the scale before (read_side_data.py);
then one table: p95 at each scale with 1 and 8 clients, the growth from the first scale to the
last, and the reads whose cost grows with the data named.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS_MS = {"c1": 100.0, "cpu": 100.0, "c8": 250.0}
# A read "grows with the data" when its p95 at the largest scale is this much above the first
# (and more than GROWS_MS: a millisecond or two of noise on a fast read is not growth).
GROWS_RATIO = 1.5
GROWS_MS = 10.0


def _child(args: argparse.Namespace, scale: int, previous: str, out: Path) -> list[str]:
    command = [
        sys.executable,
        str(HERE / "read_side.py"),
        f"--database={args.database}_{scale}x",
        f"--endpoints={args.endpoints * scale}",
        f"--days={args.days}",
        f"--workloads={args.workloads}",
        f"--slots={args.slots}",
        f"--samples-per-run={args.samples_per_run}",
        f"--source={args.source}",
        f"--requests={args.requests}",
        f"--load-seconds={args.load_seconds}",
        f"--only={args.only}",
        f"--json={out}",
        "--gunicorn",
        "--skip-export",
    ]
    if previous:
        command.append(f"--grow-from={previous}")
    return command


def run_scales(args: argparse.Namespace) -> int:
    scales = [int(s) for s in args.scales.split(",")]
    results: dict[int, dict[str, dict[str, float]]] = {}
    previous = ""
    with tempfile.TemporaryDirectory() as folder:
        for scale in scales:
            out = Path(folder) / f"{scale}.json"
            print(f"\n===== {scale}x: {args.endpoints * scale} endpoints =====", flush=True)
            subprocess.run(_child(args, scale, previous, out), check=False)
            if not out.exists():
                print(f"{scale}x gave no figures (see above)")
                return 2
            results[scale] = json.loads(out.read_text())
            previous = f"{args.database}_{scale}x"
    return growth_table(scales, results)


def growth_table(scales: list[int], results: dict[int, dict[str, dict[str, float]]]) -> int:
    """Print p95 per target and scale: wall with 1 client, CPU (app + database) with 1 client,
    wall with 8 clients; 1 if any target is missed."""
    first, last = scales[0], scales[-1]
    heads = " ".join(f"{s}x".rjust(6) for s in scales)
    missed, grows = [], []
    for key, title in KINDS.items():
        print(f"\np95 ms, {title} (≤ {TARGETS_MS[key]:.0f}); growth {first}x→{last}x")
        print(f"  {'read':<26} {heads}  growth")
        for name in results[first]:
            values = [results[s].get(name, {}).get(key) for s in scales]
            if all(v is None for v in values):
                continue
            shown = " ".join("     -" if v is None else f"{v:6.0f}" for v in values)
            low, high = values[0], values[-1]
            ratio = f"{high / low:5.2f}×" if low and high else "     -"
            print(f"  {name:<26} {shown}  {ratio}")
            if any(v is not None and v > TARGETS_MS[key] for v in values):
                missed.append(f"{name} ({key})")
            if key == "cpu" and low and high and high > low * GROWS_RATIO and high - low > GROWS_MS:
                grows.append(f"{name} ({low:.0f} → {high:.0f} ms CPU)")
    print("\nmissed: " + ("; ".join(missed) if missed else "none"))
    print("grows with the data (CPU p95): " + ("; ".join(grows) if grows else "none"))
    return 1 if missed else 0


KINDS = {
    "c1": "1 client, wall",
    "cpu": "1 client, CPU of the request (app + its database backend)",
    "c8": "8 clients via gunicorn, wall",
}
