"""The series a run measures pool their evidence of how the provider drifts (docs/alerts.md,
"The run's series pool their evidence of drift"), and with the provider's other series: a
drifting provider whose one series read its drift too low on 28 days no longer alerts on the
drift, and a step is still caught."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np

from alerts.detection.baseline import correlate, fit_shape
from alerts.detection.detector import SeriesInput, assess_together, judge, noise_lags
from alerts.detection.hysteresis import Streak, Transition, advance
from alerts.detection.noise import Lags, pool
from alerts.detection.rules import DECODE, TTFT, DetectorConfig
from alerts.detection.runs import Runs

CONFIG = DetectorConfig()
ALONE = DetectorConfig(pool_noise=False)
DECODE_RULE, TTFT_RULE = CONFIG.rules[DECODE], CONFIG.rules[TTFT]
MONDAY = datetime(2026, 3, 9, tzinfo=UTC)
HOURS = np.arange(2, 60 * 24, 8)  # 3 runs a day for 60 days
LEVELS = (70.0, 400.0)  # decode tok/s, TTFT ms


def _drifting(rng: np.random.Generator, *, phi: float, white: float) -> np.ndarray:
    """A provider's state drifting in real time (AR(1), correlation φ per 8 h, σ 0.06) plus
    each run's own noise (σ `white`), log units, at HOURS."""
    decay = phi ** (1 / 8)
    path = np.zeros(60 * 24)
    for i in range(1, len(path)):
        path[i] = decay * path[i - 1] + rng.normal(0, 0.06 * math.sqrt(1 - decay**2))
    return path[HOURS] + rng.normal(0, white, len(path))[HOURS]


def _pair(seed: int, *, phi: float, white: float, step_at: float | None = None) -> list[Runs]:
    """Decode and TTFT of one endpoint, each drifting alike (independent paths); from
    `step_at` (hours) decode 25 % slower and TTFT 30 % higher."""
    rng = np.random.default_rng(seed)
    out = []
    for level, change in zip(LEVELS, (math.log(0.75), math.log(1.3)), strict=True):
        logs = math.log(level) + _drifting(rng, phi=phi, white=white)
        if step_at is not None:
            logs = logs + np.where(HOURS >= step_at, change, 0.0)
        out.append(Runs.of(MONDAY.timestamp() + HOURS * 3600.0, logs))
    return out


def _opened(
    pair: list[Runs], config: DetectorConfig, *, from_day: int, peers: list[Runs] = ()
) -> list[list[float]]:
    """Evaluate both series together after every run from `from_day` on, as evaluate.py does
    (an open alert's frozen baseline; resolve and new normal re-arm), with what the provider's
    other series (`peers`) read of their noise then: when alerts open (h)."""
    rules = (config.rules[DECODE], config.rules[TTFT])
    streaks, frozen, opened = [Streak(), Streak()], [None, None], [None, None]
    out: list[list[float]] = [[], []]
    for hour, now in zip(HOURS, pair[0].t, strict=True):
        if hour < from_day * 24:
            continue
        items = [
            SeriesInput(runs.between(0, now), rule, f, o)
            for runs, rule, f, o in zip(pair, rules, frozen, opened, strict=True)
        ]
        found = (noise_lags(h.between(0, now), now=now, config=config) for h in peers)
        lags = [x for x in found if x is not None]
        tests = assess_together(items, now=now, config=config, peers=lags)
        for k, judgement in enumerate(judge(tests, config)):
            streaks[k], transition = advance(
                streaks[k],
                judgement.verdict,
                config,
                recovered=judgement.recovered,
                fresh=judgement.fresh,
                new_normal=judgement.new_normal,
            )
            if transition == Transition.OPEN:
                out[k].append(float(hour))
                frozen[k], opened[k] = tests[k].baseline, judgement.opened
            elif transition in (Transition.RESOLVE, Transition.NEW_NORMAL):
                frozen[k], opened[k] = None, None
    return out


def test_a_drifting_provider_read_on_both_its_series_does_not_alert_on_its_drift() -> None:
    # A provider drifting slowly (φ 0.95 per 8 h, σ 6 %) under 7 % run noise, nothing
    # changed, evaluated for the month after a full baseline. Read alone, each series' 28 days
    # put the drift's correlation too low at times, and TTFT opens a false alert; read with
    # the other series' evidence, neither does. (Seed 26 did this on decode, through the
    # state-space arm, until that arm read the runs with the pooled correlation where the
    # variogram reads the walk lower: alone, it opens nothing there now.)
    pair = _pair(14, phi=0.95, white=0.07)
    _, ttft = _opened(pair, ALONE, from_day=31)  # what TTFT alone does
    assert ttft
    assert _opened(pair, CONFIG, from_day=31) == [[], []]


def test_a_step_on_a_drifting_provider_is_still_caught() -> None:
    # The same provider, decode 25 % slower and TTFT 30 % higher from day 40: both open within
    # two days of the step, pooled as alone.
    at = 40 * 24.0 + 3
    for config in (ALONE, CONFIG):
        opened = _opened(_pair(26, phi=0.95, white=0.07, step_at=at), config, from_day=38)
        assert all(hours and at <= hours[0] <= at + 48 for hours in opened), opened


def test_the_providers_other_endpoints_lend_their_evidence_of_its_drift() -> None:
    # The same slowly drifting provider (φ 0.95 per 8 h). Its decode and TTFT pooled, one
    # endpoint still reads the drift too low and decode opens a false alert on day 50; with
    # what two other endpoints of the provider read of their own noise, it opens none.
    pair = _pair(100, phi=0.95, white=0.07)
    decode, _ = _opened(pair, CONFIG, from_day=31)
    assert decode
    others = [*_pair(1100, phi=0.95, white=0.07), *_pair(2100, phi=0.95, white=0.07)]
    assert _opened(pair, CONFIG, from_day=31, peers=others) == [[], []]
    # ...and a step on it is still caught within two days
    at = 40 * 24.0 + 3
    stepped = _pair(26, phi=0.95, white=0.07, step_at=at)
    opened = _opened(stepped, CONFIG, from_day=38, peers=others)
    assert all(hours and at <= hours[0] <= at + 48 for hours in opened), opened


def test_a_reading_that_is_not_one_or_counts_other_hours_is_left_out() -> None:
    # SeriesState.noise_lags is read back from the database: anything but four finite lags,
    # their pairs and the hours they are counted in is no reading (never an error).
    good = Lags(np.array([0.6, 0.5, 0.4, 0.3]), np.array([80.0, 79.0, 78.0, 77.0]), 8.0)
    back = Lags.from_dict(good.as_dict())
    assert back is not None and back.spacing_h == 8.0
    assert np.array_equal(back.raw, good.raw) and np.array_equal(back.pairs, good.pairs)
    for bad in ({}, {"raw": [0.4], "pairs": [80], "spacing_h": 8}, {**good.as_dict(), "raw": "x"},
                {**good.as_dict(), "spacing_h": None}, {**good.as_dict(), "spacing_h": -8},
                {**good.as_dict(), "raw": [float("nan")] * 4}):  # fmt: skip
        assert Lags.from_dict(bad) is None
    # A provider's endpoint run 6 times a day counts its lags in 4 hours: beside a series run
    # every 8 hours it lends nothing; counted in 8 hours, its drift raises the series' own.
    pair = _pair(100, phi=0.95, white=0.07)
    now = pair[0].t[-1]

    def rho(peers: list[Lags]) -> float:
        items = [
            SeriesInput(r, rule) for r, rule in zip(pair, (DECODE_RULE, TTFT_RULE), strict=True)
        ]
        return assess_together(items, now=now, config=CONFIG, peers=peers)[0].baseline.rho

    four_hourly = Lags(good.raw, good.pairs * 2, 4.0)
    assert rho([four_hourly]) == rho([])
    assert rho([Lags(good.raw, good.pairs * 2, 8.0)]) > rho([])


def test_each_series_keeps_its_own_correlation_beside_one_that_differs_surely() -> None:
    # Decode drifts (φ 0.95) while TTFT's runs are independent: pooled in full, each would
    # read about the mean of the two, the drift halved on decode and lent to TTFT. Each keeps
    # most of its own reading.
    rng = np.random.default_rng(5)
    times = MONDAY.timestamp() + HOURS[HOURS < 28 * 24] * 3600.0
    drifting = _drifting(rng, phi=0.95, white=0.02)[: len(times)]
    steady = rng.normal(0, 0.07, len(times))
    noises = (drifting, steady)
    runs = [Runs.of(times, math.log(lv) + x) for lv, x in zip(LEVELS, noises, strict=True)]
    shapes = [fit_shape(r, min_bucket_runs=4, min_week_runs=6) for r in runs]
    pooled = pool([s.lags for s in shapes])
    (own_drift, own_steady), (with_drift, with_steady) = (
        [correlate(s, r, p).rho for s, r in zip(shapes, runs, strict=True)] for p in (None, pooled)
    )
    assert own_drift > 0.5 and own_steady < 0.1  # the two series really differ
    assert with_drift > 0.75 * own_drift and with_steady < 0.1
