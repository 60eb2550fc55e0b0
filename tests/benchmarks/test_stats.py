"""A run's summary: percentiles over ok samples only, error counts, aggregate throughput."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from benchmarks.measure import Measurement
from benchmarks.stats import METRICS, median, percentile, summarize

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


def ok(ttft: float, tps: float, tokens: int, *, start_s: float = 0.0, **fields) -> Measurement:
    total = ttft + tokens / tps * 1000
    return Measurement(
        started_at=T0 + timedelta(seconds=start_s),
        t0_ns=0,
        ttfb_ms=ttft / 2,
        ttft_ms=ttft,
        ttfa_ms=ttft,
        total_ms=total,
        last_token_ms=total - 1,
        output_tokens=tokens,
        tokens_source="usage",
        decode_tps=tps,
        chunks=tokens,
        **fields,
    )


def error(category: str, *, ttfb: float | None = 40.0, start_s: float = 0.0) -> Measurement:
    return Measurement(
        started_at=T0 + timedelta(seconds=start_s),
        t0_ns=0,
        ttfb_ms=ttfb,
        total_ms=ttfb,
        error_category=category,
        http_status=429,
    )


def test_it_matches_numpy_percentiles() -> None:
    values = sorted([3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.3])
    for q in (0, 10, 50, 90, 99, 100):
        assert percentile(values, q) == pytest.approx(np.percentile(values, q))
    with pytest.raises(ValueError):
        percentile([], 50)


def test_it_summarizes_only_ok_samples_for_speed() -> None:
    samples = [ok(500, 70, 700), ok(600, 60, 600), ok(700, 80, 800)]
    samples += [error("rate_limited"), error("rate_limited"), error("server_error")]
    summary = summarize(samples)
    ttfts = [500.0, 600.0, 700.0]
    assert summary["samples"] == 6 and summary["ok"] == 3 and summary["errors"] == 3
    assert summary["errors_by_category"] == {"rate_limited": 2, "server_error": 1}
    assert summary["ttft_ms"]["p50"] == np.percentile(ttfts, 50)
    assert summary["ttft_ms"]["p90"] == pytest.approx(np.percentile(ttfts, 90))
    assert summary["ttft_ms"]["p99"] == pytest.approx(np.percentile(ttfts, 99))
    assert summary["ttft_ms"]["n"] == 3
    # The errors' 40 ms header times never lower the ok samples' ttfb statistics.
    assert summary["ttfb_ms"]["p50"] == 300.0
    assert median(summary, "decode_tps") == 70.0
    assert median(summary, "itl_p50_ms") is None  # no sample carries it
    assert summary["tokens_source"] == {"usage": 3}


def test_it_divides_ok_tokens_by_the_wall_time_of_the_rounds() -> None:
    # Two rounds of two concurrent requests; the second round starts 100 s later (a gap that
    # is not wall time of the run), and one request of round 2 fails after 40 ms.
    first = [ok(100, 50, 100, start_s=0.0), ok(100, 25, 100, start_s=0.01)]
    second = [ok(200, 100, 300, start_s=100.0), error("server_error", start_s=100.0)]
    summary = summarize(first + second, concurrency=2)  # in-memory: rounds by list position
    round_1 = max(0.0 + 2.1, 0.01 + 4.1) - 0.0  # ends: ttft + tokens / tps
    round_2 = 100.0 + 3.2 - 100.0
    assert summary["wall_s"] == pytest.approx(round_1 + round_2)
    assert summary["throughput_tps"] == pytest.approx((100 + 100 + 300) / (round_1 + round_2))


def test_it_summarizes_a_run_without_ok_samples() -> None:
    summary = summarize([error("auth", ttfb=None), error("auth")])
    assert summary["ok"] == 0 and summary["errors_by_category"] == {"auth": 2}
    assert summary["throughput_tps"] is None
    assert not any(name in summary for name in METRICS)
    assert summarize([])["samples"] == 0


def test_it_keeps_refused_answers_out_of_every_speed_figure() -> None:
    fast_refusal = ok(50, 900, 20, outcome="refused")
    samples = [ok(500, 70, 700), ok(700, 80, 800), fast_refusal]
    summary = summarize(samples, concurrency=3)
    assert summary["ok"] == 3 and summary["outcomes"] == {"refused": 1}
    assert summary["ttft_ms"]["p50"] == 600.0 and summary["ttft_ms"]["n"] == 2
    assert summary["output_tokens"]["n"] == 2
    assert summary["throughput_tps"] == pytest.approx((700 + 800) / summary["wall_s"])
