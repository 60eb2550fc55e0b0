"""Is the advisor's advice good? A back-test on SYNTHETIC history.

    python bench/advice_backtest.py [--days 90] [--window 14] [--tasks-per-day 48] [--seed 7]

Eight synthetic endpoints (labelled synthetic; nothing is sent anywhere) with speeds that drift,
change by time of day and regress, measured like the default schedule does: a base run of 5
requests at 02:00, 10:00 and 18:00 UTC each day, summarised as tokspeed summarises a run (p50
and p90 TTFT, p50 and p10 decode speed). Each day the advisor sees the runs of the trailing
window (its own projection and ranking code: advisor.projection.project, advisor.ranking.rank)
and its recommendation is followed for the whole next day. The next day's tasks (a 4-call
agent loop at random times of day) are then simulated on every endpoint from the true speeds,
and compared with:

  (a) oracle    — knew the next day: the endpoint with the lowest mean task time that day
  (b) best      — the one endpoint with the lowest mean task time over the whole history
  (c) cheapest  — the endpoint with the lowest cost per task

Prints mean / p90 task time, regret against the oracle in seconds and dollars per 1,000 tasks,
and how often a task met the latency budget. Targets: the advisor beats (b) and (c) on the
budget-met rate, and its mean task time is within 10 % of the oracle's.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SLOT_HOURS = (2, 10, 18)
SAMPLES_PER_RUN = 5


@dataclass(frozen=True)
class Truth:
    """A synthetic endpoint's true behaviour. decode in tok/s, ttft in ms, price USD/1M out."""

    name: str
    ttft_ms: float
    decode_tps: float
    price_out: float
    tod_amplitude: float = 0.0  # decode loss at the daily peak (0–1)
    peak_hour: float = 15.0
    drift_per_day: float = 0.0  # relative change of decode speed per day
    regress: tuple[float, float, float] | None = None  # (from day, to day, decode factor)
    run_noise: float = 0.05  # lognormal σ of a run's condition

    def condition(self, day: float, hour: float) -> tuple[float, float]:
        """(ttft ms, decode tok/s) at a moment, before noise."""
        load = 0.5 * (1 + np.cos(2 * np.pi * (hour - self.peak_hour) / 24))
        decode = self.decode_tps * (1 - self.tod_amplitude * load)
        decode *= max(0.2, 1 + self.drift_per_day * day)
        ttft = self.ttft_ms * (1 + self.tod_amplitude * load)
        if self.regress and self.regress[0] <= day < self.regress[1]:
            decode *= self.regress[2]
            ttft /= self.regress[2] ** 0.5
        return ttft, decode


ENDPOINTS = (
    Truth("steady-pricey", ttft_ms=400, decode_tps=180, price_out=10.0),
    Truth("cheap-slow", ttft_ms=900, decode_tps=45, price_out=0.3),
    Truth("night-owl", ttft_ms=350, decode_tps=260, price_out=2.0, tod_amplitude=0.6),
    Truth("regressor", ttft_ms=350, decode_tps=300, price_out=3.0, regress=(40, 58, 0.25)),
    Truth("improver", ttft_ms=500, decode_tps=80, price_out=1.5, drift_per_day=0.02),
    Truth("decliner", ttft_ms=450, decode_tps=240, price_out=1.2, drift_per_day=-0.009),
    Truth("middling", ttft_ms=600, decode_tps=110, price_out=0.8),
    Truth("noisy", ttft_ms=500, decode_tps=170, price_out=1.0, run_noise=0.35),
)


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tokspeed")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()  # the advisor's modules import models; no query is made


def measure_runs(truth: Truth, index: int, days: int, rng: np.random.Generator, start: datetime):
    """The RunPoints the schedule would have stored for this endpoint."""
    from advisor.measures import RunPoint

    points = []
    for day in range(days):
        for hour in SLOT_HOURS:
            ttft, decode = truth.condition(day, hour)
            factor = rng.lognormal(0, truth.run_noise)
            ttfts = ttft * factor * rng.lognormal(0, 0.12, SAMPLES_PER_RUN)
            decodes = decode / factor * rng.lognormal(0, 0.06, SAMPLES_PER_RUN)
            slot = start + timedelta(days=day, hours=hour)
            points.append(
                RunPoint(
                    slot=slot,
                    tod_bucket=hour // 6,
                    context_tokens=0,
                    concurrency=1,
                    input_tokens=2000,
                    ok=SAMPLES_PER_RUN,
                    errors=0,
                    ttft_p50_ms=float(np.percentile(ttfts, 50)),
                    ttft_p90_ms=float(np.percentile(ttfts, 90)),
                    decode_tps_p50=float(np.percentile(decodes, 50)),
                    decode_tps_p10=float(np.percentile(decodes, 10)),
                )
            )
    return points


def task_times(shape, rng: np.random.Generator, days: int, per_day: int) -> np.ndarray:
    """[endpoint, day, task] seconds: every endpoint sees the same task moments and draws."""
    hours = rng.uniform(0, 24, (days, per_day))
    factors = rng.lognormal(0, 1, (len(ENDPOINTS), days, per_day))  # scaled per endpoint below
    ttft_noise = rng.lognormal(0, 0.12, (days, per_day, shape.calls))
    decode_noise = rng.lognormal(0, 0.06, (days, per_day, shape.calls))
    out = np.zeros((len(ENDPOINTS), days, per_day))
    for e, truth in enumerate(ENDPOINTS):
        for d in range(days):
            for t in range(per_day):
                ttft, decode = truth.condition(d, hours[d, t])
                f = factors[e, d, t] ** truth.run_noise
                per_call = (ttft * f * ttft_noise[d, t]) / 1000 + shape.decoded_tokens / (
                    decode / f * decode_noise[d, t]
                )
                out[e, d, t] = per_call.sum() + shape.calls * shape.tool_s
    return out


def follow(args, shape, history, truth, costs) -> dict[str, list[int]]:
    """Each day's pick of each strategy: the advisor (from the window before the day), the
    oracle (the day's truth), the best endpoint overall and the cheapest."""
    from advisor.projection import project
    from advisor.ranking import Option, rank

    start = datetime(2026, 1, 1, tzinfo=UTC)
    first = args.window  # the advisor needs a window of history before its first answer
    followed_days = range(first, args.days)
    picks = {"advisor": [], "oracle": [], "best overall": [], "cheapest": []}
    best_overall = int(np.argmin(truth.mean(axis=(1, 2))))
    cheapest = int(np.argmin(costs))
    for day in followed_days:
        until = start + timedelta(days=day)  # runs of days before `day` are known
        options = []
        for index, points in enumerate(history):
            known = [p for p in points if until - timedelta(days=args.window) <= p.slot < until]
            projection = project(index, known, shape)
            if not projection.measured:
                continue
            options.append(
                Option(endpoint_id=index, slug=ENDPOINTS[index].name, label=ENDPOINTS[index].name,
                       model="m", provider="synthetic", provider_slug="synthetic",
                       protocol="openai_chat", base_url="http://synthetic.invalid/v1",
                       api_key_env="", simulated=True, price_in=None, price_out=None,
                       price_cached=None, projection=projection, cost_per_task=costs[index])
            )  # fmt: skip
        chosen = rank(options, shape)
        picks["advisor"].append(chosen.endpoint_id)
        picks["oracle"].append(int(np.argmin(truth[:, day, :].mean(axis=1))))
        picks["best overall"].append(best_overall)
        picks["cheapest"].append(cheapest)

    return picks


def report(args, shape, truth, costs, picks: dict[str, list[int]]) -> None:
    followed_days = range(args.window, args.days)
    best_overall, cheapest = picks["best overall"][0], picks["cheapest"][0]
    days = np.array(list(followed_days))
    print("SYNTHETIC back-test: 8 synthetic endpoints (drifting, time-of-day, regressing)")
    print(
        f"{args.days} days, advice from a {args.window}-day window, followed for "
        f"{len(days)} days × {args.tasks_per_day} tasks; task = {shape.calls} calls × "
        f"{shape.output_tokens} tokens + {shape.tool_s} s tools; budget {shape.budget_s:g} s"
    )
    oracle_times = truth[picks["oracle"], days, :]
    oracle_cost = costs[picks["oracle"]].mean()
    header = (f"{'strategy':<14}{'mean s':>8}{'p90 s':>8}{'regret s/1k':>13}{'$/1k tasks':>12}"
              f"{'regret $/1k':>13}{'budget met':>12}")  # fmt: skip
    print(header)
    results = {}
    for name, chosen in picks.items():
        times = truth[chosen, days, :]
        mean = float(times.mean())
        usd = float(costs[chosen].mean()) * 1000
        met = float((times <= shape.budget_s).mean())
        regret_s = (mean - float(oracle_times.mean())) * 1000
        regret_usd = usd - oracle_cost * 1000
        results[name] = (mean, met)
        print(f"{name:<14}{mean:>8.2f}{np.percentile(times, 90):>8.2f}{regret_s:>13,.0f}"
              f"{usd:>12.2f}{regret_usd:>13.2f}{met:>12.1%}")  # fmt: skip
    switches = sum(
        1 for a, b in zip(picks["advisor"], picks["advisor"][1:], strict=False) if a != b
    )
    used = sorted({ENDPOINTS[i].name for i in picks["advisor"]})
    print(f"advisor switched {switches} times; endpoints used: {', '.join(used)}")
    print(f"best overall = {ENDPOINTS[best_overall].name}; cheapest = {ENDPOINTS[cheapest].name}")
    beats = results["advisor"][1] > max(results["best overall"][1], results["cheapest"][1])
    within = results["advisor"][0] <= 1.10 * results["oracle"][0]
    ratio = results["advisor"][0] / results["oracle"][0]
    print(f"target: budget-met rate above (b) and (c): {'MET' if beats else 'NOT MET'}")
    print(f"target: mean task time within 10 % of the oracle: "
          f"{'MET' if within else 'NOT MET'} ({ratio - 1:+.1%})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--window", type=int, default=14)
    parser.add_argument("--tasks-per-day", type=int, default=48)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--budget", type=float, default=20.0)
    args = parser.parse_args()
    setup_django()
    from advisor.shape import Shape
    from benchmarks.money import Prices, usd

    shape = Shape(input_tokens=2000, output_tokens=600, calls=4, tool_s=0.5,
                  budget_s=args.budget)  # fmt: skip
    rng = np.random.default_rng(args.seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    history = [measure_runs(t, i, args.days, rng, start) for i, t in enumerate(ENDPOINTS)]
    truth = task_times(shape, rng, args.days, args.tasks_per_day)
    costs = np.array([
        usd(shape.cost(Prices.listed(t.price_out / 4, t.price_out)))
        for t in ENDPOINTS
    ])  # fmt: skip
    report(args, shape, truth, costs, follow(args, shape, history, truth, costs))


if __name__ == "__main__":
    main()
