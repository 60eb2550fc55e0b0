"""Start-up cost of `speedtest` and of a worker process: CPU seconds and peak RSS (issue 33).

Each probe is a fresh interpreter that does what the entry point does before its first request:
  speedtest  `manage.py speedtest --help` (Django set up, the admin discovered, the command and
             the modules a plain OpenAI-compatible run imports)
  worker     Django set up and Celery's task modules imported, as `celery worker` does at start
  openai     the modules a plain OpenAI-compatible measurement imports (client, burst, adapter)
CPU is the child's user + system time (resource.getrusage), RSS its peak (ru_maxrss), each the
median of --runs. --against REV measures that revision too, from a temporary git worktree, so the
two are timed on the same machine in the same minute.

    python bench/startup.py [--runs 7] [--against REV]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBES = {
    "speedtest": ["manage.py", "speedtest", "--help"],
    "worker": [
        "-c",
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'tokspeed.settings');"
        " django.setup(); from tokspeed.celery import app; app.loader.import_default_modules()",
    ],
    "openai": [
        "-c",
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'tokspeed.settings');"
        " django.setup(); from benchmarks.measure import make_client, measure_burst;"
        " from providers.registry import ADAPTERS; ADAPTERS['openai_chat']",
    ],
}


def probe(tree: Path, argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS MB) of one fresh interpreter running argv in tree."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tempfile.gettempdir()}/startup.sqlite3"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, *argv], cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss / 1024  # ru_maxrss of children: the largest so far, in KiB


def measure(tree: Path, runs: int) -> dict[str, tuple[float, float]]:
    figures = {}
    for name in PROBES:
        cpus, rss = [], []
        for _ in range(runs):
            # A grandchild per probe so RUSAGE_CHILDREN's peak RSS is this probe's own.
            out = subprocess.run(
                [sys.executable, __file__, "--one", name, "--tree", str(tree)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            cpus.append(float(out[0]))
            rss.append(float(out[1]))
        figures[name] = (statistics.median(cpus), statistics.median(rss))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", help="a git revision to measure beside the working tree")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        cpu, rss = probe(Path(args.tree), PROBES[args.one])
        print(f"{cpu:.4f} {rss:.1f}")
        return
    trees = {"this tree": ROOT}
    holder = None
    if args.against:
        holder = tempfile.mkdtemp(prefix="startup-")
        other = Path(holder) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(other), args.against],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        trees[args.against] = other
    try:
        print(f"{'probe':<10} {'tree':<12} {'CPU s':>7} {'RSS MB':>7}   (median of {args.runs})")
        for label, tree in trees.items():
            for name, (cpu, rss) in measure(tree, args.runs).items():
                print(f"{name:<10} {label:<12} {cpu:7.3f} {rss:7.1f}")
    finally:
        if holder:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(Path(holder) / "tree")], cwd=ROOT
            )


if __name__ == "__main__":
    main()
