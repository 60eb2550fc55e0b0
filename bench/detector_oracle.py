"""What an oracle could do at issue 9's false-alert budget (bench/detector.py's frame of reference).

A CUSUM that knows everything the detector has to estimate — the baseline level, the run noise
(normal, independent), the size of the step — is the fastest detector of a step for a given
rate of false alarms (Lorden). Its threshold is set so that on noise alone it alarms 0.05 times
a series-month (90 runs, restarting after each alarm); the figure is how often it then catches
a step within a number of runs (9 runs: 72 h at three runs a day). No detector that has to learn
the noise from 28 days of history, and needs two positive evaluations, does better.

    python bench/detector_oracle.py [--effect 0.10] [--noise 0.074 0.090] [--runs 9]

Run noise: 0.074 is sine·iid's (σ 0.15 per request, the trimmed mean of five), 0.090 the
shared-noise families' (0.06 of it shared by the run's requests).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

RUNS_A_MONTH = 90
BUDGET = 0.05  # false alarms per series-month


def cusum_alarms(x: np.ndarray, drift: float, threshold: float) -> int:
    """Alarms of a one-sided CUSUM over the rows of x (series × runs), restarting after each."""
    s = np.zeros(x.shape[0])
    alarms = 0
    for column in x.T:
        s = np.maximum(0.0, s + column - drift)
        hit = s > threshold
        alarms += int(hit.sum())
        s[hit] = 0.0
    return alarms


def calibrate(rng, noise: float, drift: float, *, months: int) -> float:
    """The smallest threshold whose false alarms stay within the budget on noise alone."""
    x = rng.normal(0, noise, (200, months * RUNS_A_MONTH // 200))
    lo, hi = 0.0, 2.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if cusum_alarms(x, drift, mid) / months > BUDGET:
            lo = mid
        else:
            hi = mid
    return hi


def caught_within(rng, noise, shift, drift, threshold, runs: int, series: int) -> float:
    """Share of steps caught within `runs` runs, from the CUSUM's state after 60 quiet runs."""
    s = np.zeros(series)
    for column in rng.normal(0, noise, (60, series)):
        s = np.maximum(0.0, s + column - drift)
    caught = np.zeros(series, bool)
    for column in rng.normal(shift, noise, (runs, series)):
        s = np.maximum(0.0, s + column - drift)
        caught |= s > threshold
    return float(caught.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--effect", type=float, default=0.10, help="decode slowdown, a fraction")
    parser.add_argument("--noise", type=float, nargs="+", default=[0.074, 0.090])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    shift = -math.log1p(-args.effect)
    print(f"oracle CUSUM, −{args.effect:.0%} step, ≤ {BUDGET} false alarms a series-month")
    for noise in args.noise:
        threshold = calibrate(rng, noise, shift / 2, months=4000)
        share = caught_within(rng, noise, shift, shift / 2, threshold, args.runs, 20_000)
        print(f"run noise {noise:.3f}: caught within {args.runs} runs in {share:.0%}")


if __name__ == "__main__":
    main()
