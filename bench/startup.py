"""Start-up cost of `speedtest` and of a worker process: CPU seconds and peak RSS (issue 33).

Each probe is a fresh interpreter that does what the entry point does before its first request:
  speedtest  `manage.py speedtest --help` (Django set up, the admin discovered, the command and
             the modules a plain OpenAI-compatible run imports)
  worker     Django set up and Celery's task modules imported, as `celery worker` does at start
  openai     the modules a plain OpenAI-compatible measurement imports (client, burst, adapter)
CPU is the child's user + system time (resource.getrusage), RSS its peak (ru_maxrss), each the
median of --runs. --against REV measures that revision too, from a temporary git worktree; the
trees take turns run by run, so a change in the machine's load falls on both alike. The load
average is printed before and after (the figures are only as quiet as the machine).
--pycache writes and reuses bytecode in a temporary PYTHONPYCACHEPREFIX, as an install does on
its second start (a shell with PYTHONDONTWRITEBYTECODE=1 compiles the project's modules at every
start); each tree and probe then gets one unmeasured run first.

    python bench/startup.py [--runs 7] [--against REV]...
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
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


def one(tree: Path, name: str, env: dict[str, str]) -> tuple[float, float]:
    """One probe in a grandchild, so RUSAGE_CHILDREN's peak RSS is this probe's own."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", name, "--tree", str(tree)],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode:
        raise SystemExit(f"probe {name} in {tree} failed:\n{done.stderr}")
    out = done.stdout.split()
    return float(out[0]), float(out[1])


def measure(
    trees: dict[str, Path], runs: int, env: dict[str, str], warm: bool
) -> dict[tuple[str, str], tuple[float, float]]:
    """(tree label, probe) → (median CPU s, median peak RSS MB); the trees alternate run by run."""
    cpus: dict[tuple[str, str], list[float]] = {}
    rss: dict[tuple[str, str], list[float]] = {}
    for tree in trees.values() if warm else ():
        for name in PROBES:
            one(tree, name, env)
    for _ in range(runs):
        for label, tree in trees.items():
            for name in PROBES:
                cpu, peak = one(tree, name, env)
                cpus.setdefault((label, name), []).append(cpu)
                rss.setdefault((label, name), []).append(peak)
    return {key: (statistics.median(cpus[key]), statistics.median(rss[key])) for key in cpus}


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def add_worktree(holder: Path, revision: str) -> Path:
    tree = holder / revision.replace("/", "_")
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(tree), revision],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        help="a git revision to measure beside the working tree (may be repeated)",
    )
    parser.add_argument(
        "--pycache", action="store_true", help="reuse bytecode, as an installed tokspeed does"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        cpu, rss = probe(Path(args.tree), PROBES[args.one])
        print(f"{cpu:.4f} {rss:.1f}")
        return
    holder = Path(tempfile.mkdtemp(prefix="startup-"))
    trees = {"this tree": ROOT}
    try:
        for revision in args.against:
            trees[revision] = add_worktree(holder, revision)
        env = dict(os.environ)
        if args.pycache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(holder / "pycache")
        kept = "cached" if args.pycache else "as the environment says"
        print(f"bytecode: {kept} (PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE')})")
        print(f"load average before: {load()}")
        figures = measure(trees, args.runs, env, warm=args.pycache)
        print(f"load average after:  {load()}")
        print(f"{'probe':<10} {'tree':<12} {'CPU s':>7} {'RSS MB':>7}   (median of {args.runs})")
        for name in PROBES:
            for label in trees:
                cpu, rss = figures[(label, name)]
                print(f"{name:<10} {label:<12} {cpu:7.3f} {rss:7.1f}")
    finally:
        for tree in trees.values():
            if tree != ROOT:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT)
        shutil.rmtree(holder, ignore_errors=True)


if __name__ == "__main__":
    main()
