"""The arithmetic of docs/design.md §4 and the token estimate, without any network."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from benchmarks.measure import SAMPLE_FIELDS, Limits, Measurement
from benchmarks.measure.timing import decode_token_count, decode_tps, itl_stats, tpot_ms
from benchmarks.models import Sample
from providers.tokens import estimate_tokens


def test_it_lists_every_stored_sample_field() -> None:
    stored = {f.name for f in Sample._meta.concrete_fields} - {"id", "run", "index"}
    assert set(SAMPLE_FIELDS) == stored
    assert len(SAMPLE_FIELDS) == len(stored)


def test_it_serialises_a_measurement_with_section_4_names() -> None:
    started = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    m = Measurement(started_at=started, t0_ns=1, ttft_ms=12.5, total_ms=80.0, output_tokens=9)
    values = m.as_dict()
    assert set(values) == set(SAMPLE_FIELDS) | {"e2e_ms"}
    assert values["e2e_ms"] == values["total_ms"] == 80.0
    assert values["started_at"] == started.isoformat()
    assert m.ok and not Measurement(started_at=started, t0_ns=1, error_category="auth").ok


def test_it_computes_decode_speed_over_the_window_after_the_first_token() -> None:
    # 300 tokens between ttft 200 ms and end 1,700 ms: 300 / 1.5 s.
    assert decode_tps(300, ttft_ms=200.0, total_ms=1700.0) == pytest.approx(200.0)
    assert decode_tps(0, ttft_ms=1.0, total_ms=2.0) is None
    assert decode_tps(5, ttft_ms=2.0, total_ms=2.0) is None


def test_it_leaves_hidden_reasoning_out_of_the_decode_window() -> None:
    assert decode_token_count(1000, 600, reasoning_streamed=False) == 400
    assert decode_token_count(1000, 600, reasoning_streamed=True) == 1000
    assert decode_token_count(1000, None, reasoning_streamed=False) == 1000


def test_it_computes_time_per_output_token_after_the_first() -> None:
    assert tpot_ms(11, ttft_ms=100.0, last_token_ms=150.0) == pytest.approx(5.0)
    assert tpot_ms(1, ttft_ms=100.0, last_token_ms=100.0) is None


def test_it_takes_itl_percentiles_over_gaps_between_text_events() -> None:
    ms = 1_000_000
    stamps = [0, 10 * ms, 20 * ms, 20 * ms, 60 * ms]  # gaps 10, 10, 0, 40
    itl = itl_stats(stamps)
    assert itl is not None
    assert itl.p50_ms == pytest.approx(10.0)
    assert itl.max_ms == pytest.approx(40.0)
    assert itl.p90_ms == pytest.approx(10 + 0.7 * 30)  # linear between the 3rd and 4th gaps
    assert itl_stats([5]) is None


def test_it_estimates_tokens_from_text_roughly_like_a_tokenizer() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("the cat sat") == 3
    prose = (
        "Write a complete Python module implementing a rate limiter with three strategies. " * 20
    )
    # Real BPE tokenizers give ~15 tokens for that sentence; allow the documented ±20 %.
    assert 0.8 * 15 * 20 <= estimate_tokens(prose) <= 1.2 * 15 * 20
    code = "def allow(self, key: str) -> bool:\n        return self._tokens[key] > 0\n"
    assert 15 <= estimate_tokens(code) <= 30
    assert estimate_tokens("x" * 400) >= 100  # long unbroken runs are not one token


def test_it_refuses_limits_that_are_not_positive() -> None:
    with pytest.raises(ValueError, match="idle_timeout_s"):
        Limits(idle_timeout_s=0)
    assert math.isclose(Limits(deadline_s=5).deadline_s, 5)
