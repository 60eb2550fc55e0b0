"""A run's summary from its samples: percentiles of every metric, error counts, throughput.

The summary dict (stored in Run.summary) looks like::

    {"samples": 5, "ok": 4, "errors": 1, "saturated": 0, "itl_withheld": {"tail": 1},
     "errors_by_category": {"rate_limited": 1}, "outcomes": {"truncated": 1},
     "tokens_source": {"usage": 4},
     "ttft_ms": {"p10": 598.1, "p50": 612.0, "p90": 640.2, "p99": 644.8, "n": 4},
     ... one such entry for every metric in METRICS that any ok sample has ...,
     "wall_s": 41.2, "throughput_tps": 68.3}

Percentiles use linear interpolation between closest ranks (numpy's default) over successful
samples only: error samples and refused answers never enter speed statistics (docs/design.md §4).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from providers.base import ErrorCategory

from .measure.measurement import SAMPLE_FIELDS
from .measure.timing import percentile

# Outcomes that keep their timings but say nothing about speed: a refusal is not the answer that
# was asked for (its length and pace are the refusal's).
SPEEDLESS_OUTCOMES = frozenset({ErrorCategory.REFUSED})

# Sample fields that are not figures to take percentiles of: labels, error details, the
# answer's fingerprint, and error-only numbers (an ok sample has no retry_after_s).
_NOT_METRICS = frozenset(
    {
        "started_at",
        "tokens_source",
        "reasoning_mode",
        "saturated",
        "itl_withheld",
        "finish_reason",
        "outcome",
        "http_status",
        "error_category",
        "error_message",
        "retry_after_s",
        "output_chars",
        "output_sha256",
        "connect_address",
        "served_lane",
    }
)
_MEASURED = tuple(name for name in SAMPLE_FIELDS if name not in _NOT_METRICS)
_AFTER_TOTAL = _MEASURED.index("total_ms") + 1
# Every numeric field of docs/design.md §4 that a sample carries, with e2e_ms (= total_ms) beside
# total_ms: derived from SAMPLE_FIELDS so that a new §4 field is summarized without a second list.
METRICS: tuple[str, ...] = (*_MEASURED[:_AFTER_TOTAL], "e2e_ms", *_MEASURED[_AFTER_TOTAL:])
PERCENTILES = (10, 50, 90, 99)
_TIMINGS = ("connect_ms", "ttfb_ms", "first_event_ms", "ttft_ms", "last_token_ms", "total_ms")


def describe(values: Iterable[float | None]) -> dict[str, float] | None:
    """p10/p50/p90/p99 and n of the values that are not None; None when there are none."""
    present = sorted(float(v) for v in values if v is not None)
    if not present:
        return None
    summary: dict[str, float] = {f"p{q}": percentile(present, q) for q in PERCENTILES}
    summary["n"] = len(present)
    return summary


def summarize(samples: Sequence[Any], *, concurrency: int = 1) -> dict[str, Any]:
    """Summary of one run. `concurrency` groups samples into rounds (index // concurrency).

    wall_s sums each round's span (earliest start to latest end); throughput_tps is the output
    tokens of successful samples divided by that wall time: aggregate, not per-user, speed.
    Refused answers count as ok (and in "outcomes") but not in any speed figure.
    """
    ok = [s for s in samples if not s.error_category]
    measured = [s for s in ok if getattr(s, "outcome", "") not in SPEEDLESS_OUTCOMES]
    errors = Counter(s.error_category for s in samples if s.error_category)
    outcomes = Counter(getattr(s, "outcome", "") for s in ok if getattr(s, "outcome", ""))
    sources = Counter(getattr(s, "tokens_source", "") or "unknown" for s in ok)
    wall_s = _wall_s(samples, concurrency=concurrency)
    tokens = sum(s.output_tokens or 0 for s in measured)
    summary: dict[str, Any] = {
        "samples": len(samples),
        "ok": len(ok),
        "errors": sum(errors.values()),
        "errors_by_category": dict(sorted(errors.items())),
        "outcomes": dict(sorted(outcomes.items())),
        "tokens_source": dict(sorted(sources.items())),
        "wall_s": wall_s,
        "throughput_tps": tokens / wall_s if wall_s and measured else None,
        # Samples whose client fell behind the stream: ITL tails withheld, decode may read low.
        "saturated": sum(bool(getattr(s, "saturated", False)) for s in measured),
        # Samples with an ITL figure withheld (bursts left it unknown): "all", or the "tail" only.
        "itl_withheld": dict(
            sorted(Counter(w for s in measured if (w := getattr(s, "itl_withheld", ""))).items())
        ),
    }
    for name in METRICS:
        described = describe(getattr(s, name, None) for s in measured)
        if described is not None:
            summary[name] = described
    return summary


def median(summary: dict[str, Any], metric: str) -> float | None:
    """The p50 of `metric` in a summary made by summarize(), or None."""
    described = summary.get(metric)
    return described["p50"] if isinstance(described, dict) else None


def _wall_s(samples: Sequence[Any], *, concurrency: int) -> float | None:
    rounds: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for position, sample in enumerate(samples):
        span = _span(sample)
        if span is not None:
            index = getattr(sample, "index", position)
            rounds[index // max(concurrency, 1)].append(span)
    if not rounds:
        return None
    return sum(max(e for _, e in spans) - min(s for s, _ in spans) for spans in rounds.values())


def _span(sample: Any) -> tuple[float, float] | None:
    """(start, end) in epoch seconds; an error sample ends at its last measured moment."""
    started = getattr(sample, "started_at", None)
    if started is None:
        return None
    offsets = [getattr(sample, name, None) for name in _TIMINGS]
    end_ms = max((o for o in offsets if o is not None), default=0.0)
    start = started.timestamp()
    return start, start + end_ms / 1000


PER_PROMPT_METRICS = ("ttft_ms", "decode_tps", "total_ms", "input_tokens", "output_tokens")


def per_prompt(samples: Sequence[Any]) -> list[dict[str, Any]]:
    """A suite run's breakdown: each prompt's count, ok count and medians; [] for one prompt.

    The run's own medians stay over every sample, whichever prompt it sent.
    """
    groups: dict[int, list[Any]] = {}
    for sample in samples:
        index = getattr(sample, "prompt_index", None)
        if index is not None:
            groups.setdefault(index, []).append(sample)
    if len(groups) < 2:
        return []
    rows = []
    for index in sorted(groups):
        group = groups[index]
        measured = [
            s for s in group if not s.error_category and s.outcome not in SPEEDLESS_OUTCOMES
        ]
        row: dict[str, Any] = {
            "prompt": index,
            "samples": len(group),
            "ok": sum(1 for s in group if not s.error_category),
        }
        for name in PER_PROMPT_METRICS:
            described = describe(getattr(s, name, None) for s in measured)
            row[name] = described["p50"] if described else None
        rows.append(row)
    return rows


def all_requests(count: int) -> str:
    """A run's failure reason's subject: "The only request" or "All 5 requests"."""
    return "The only request" if count == 1 else f"All {count} requests"
