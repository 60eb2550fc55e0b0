"""Every verdict of a bench/detector.py run, to tell a faster detector from a changed one.

Runs bench/detector.py (its arguments pass through: --held, --confirm, --pairs, --seed, …)
with its `judge` wrapped: after every evaluation one line per series goes to --out, the
verdict and what decides it (q-value, arm, fresh, recovered, new normal, the reason) and a
hash of the whole SeriesTest and Judgement (every arm's estimate, the baseline's fit; values,
not their numpy types), so
two files compare verdicts (`cut -f1-3`) and every figure behind them (the whole line).

    python bench/detector_verdicts.py --out before.tsv -- --pairs 6 --held --confirm
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import detector as bench  # noqa: E402  (bench/detector.py: sets up Django)
import detector_confirm  # noqa: E402


def recording(judge, out):
    """`judge`, writing each evaluation's verdicts to `out`."""
    count = [0]

    def wrapped(tests, config):
        judgements = judge(tests, config)
        count[0] += 1
        for test, j in zip(tests, judgements, strict=True):
            # A value's repr, not its type's: np.float64(0.5) and 0.5 are the same figure
            text = re.sub(r"np\.float64\(([^()]*)\)", r"\1", f"{test!r}{j!r}")
            digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
            fields = (count[0], test.metric, j.verdict.value, j.q_value, j.arm, j.fresh)
            fields += (j.recovered, j.new_normal, j.reason, digest)
            out.write("\t".join(str(f) for f in fields) + "\n")
        return judgements

    return wrapped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="where the verdicts go (one line each)")
    parser.add_argument("bench_args", nargs="*", help="bench/detector.py's arguments")
    args = parser.parse_args()
    extra = ["--no-db", "--oracle-series", "0"]
    with open(args.out, "w") as out:
        wrapped = recording(bench.judge, out)
        bench.judge = wrapped
        detector_confirm.judge = wrapped
        sys.argv = ["bench/detector.py", *args.bench_args, *extra]
        bench.main()


if __name__ == "__main__":
    main()
