"""The arithmetic of docs/design.md §4 and the token estimate, without any network."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from benchmarks.measure import SAMPLE_FIELDS, Limits, Measurement
from benchmarks.measure.timing import decode_tps, read_stats, tpot_ms
from benchmarks.models import Sample
from providers.tokens import estimate_tokens


def test_it_lists_every_stored_sample_field() -> None:
    # The writer's bookkeeping, not measured: which run, request and suite prompt a sample is.
    bookkeeping = {"id", "run", "slot", "index", "prompt_index"}
    stored = {f.name for f in Sample._meta.concrete_fields} - bookkeeping
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


def test_it_counts_n_minus_one_gaps_after_the_first_token() -> None:
    # 301 tokens from ttft 200 ms to the last token at 1,700 ms: 300 gaps in 1.5 s.
    assert decode_tps(301, start_ms=200.0, last_token_ms=1700.0) == pytest.approx(200.0)
    # The old N / window read 8 tokens over 7 gaps as 8 per window: +14 % too fast.
    assert decode_tps(8, start_ms=0.0, last_token_ms=70.0) == pytest.approx(100.0)
    assert decode_tps(1, start_ms=1.0, last_token_ms=2.0) is None
    assert decode_tps(5, start_ms=2.0, last_token_ms=2.0) is None


def test_it_makes_decode_speed_the_inverse_of_time_per_output_token() -> None:
    tpot = tpot_ms(11, start_ms=100.0, last_token_ms=150.0)
    assert tpot == pytest.approx(5.0)
    assert decode_tps(11, start_ms=100.0, last_token_ms=150.0) == pytest.approx(1000 / tpot)
    assert tpot_ms(1, start_ms=100.0, last_token_ms=100.0) is None


MS = 1_000_000


def test_it_spreads_the_gap_before_a_read_over_the_events_it_brought() -> None:
    # 20 lone reads 10 ms apart, then two events in one read 4 ms after the last: 2 ms each
    # (not dropped), and however the 4 ms split, no figure moves: all reported.
    stamps = [i * 10 * MS for i in range(20)] + [194 * MS, 194 * MS]
    reads = read_stats(stamps)
    assert reads.itl is not None and reads.itl.withheld == ""
    assert reads.itl.p50_ms == pytest.approx(10.0)
    assert reads.itl.max_ms == pytest.approx(10.0)
    assert reads.itl.p99_ms == pytest.approx(10.0)
    assert (reads.coalesced_events, reads.text_reads, reads.saturated) == (2, 21, False)


def test_it_withholds_a_tail_a_burst_may_hide() -> None:
    # The same stream, but the pair came 30 ms after the last read: either 15 + 15 ms or a 30 ms
    # silence then two events back to back. The median is known, the longest gap is not.
    stamps = [i * 10 * MS for i in range(20)] + [220 * MS, 220 * MS]
    reads = read_stats(stamps)
    assert reads.itl is not None and reads.itl.withheld == "tail"
    assert reads.itl.p50_ms == pytest.approx(10.0)
    assert (reads.itl.p99_ms, reads.itl.max_ms) == (None, None)
    assert not reads.saturated


def test_it_withholds_every_figure_of_a_saturated_stream() -> None:
    # 30 events in three reads: a client that fell behind. Spread over the bursts the gaps
    # would read 4/15 ms each, but the server may as well have sent them back to back after a
    # pause: not even the median is known, so nothing is guessed.
    reads = read_stats([1 * MS] + [5 * MS] * 15 + [9 * MS] * 14)
    assert reads.saturated and reads.itl is not None and reads.itl.withheld == "all"
    assert (reads.itl.p50_ms, reads.itl.p90_ms, reads.itl.p99_ms, reads.itl.max_ms) == (None,) * 4
    assert (reads.coalesced_events, reads.text_reads) == (29, 3)
    assert read_stats([5]).itl is None and not read_stats([5]).saturated


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
