"""Simulated model profiles and the `profile+option=value` model-name syntax.

A model name is a profile followed by options joined with "+", e.g.
`sim-fast+tokens=50+fault=drop`. Times are in milliseconds, rates in tokens per second.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .faults import FAULTS


@dataclass(frozen=True, slots=True)
class Profile:
    """Timing model of one simulated deployment.

    Per-user decode rate with n concurrent streams is `tps / (1 + (n - 1) / batch_knee)`, so the
    aggregate rate saturates at `tps * batch_knee` tokens/s (continuous batching on one server).
    """

    name: str
    description: str
    ttft_ms: float  # base time to first token for a tiny prompt, at concurrency 1
    tps: float  # per-user decode rate at concurrency 1
    prefill_tps: float  # prompt tokens processed per second (TTFT grows with prompt length)
    batch_knee: float
    tokens_per_event: tuple[int, int] = (1, 1)  # inclusive range of tokens carried per SSE event
    reasoning_share: float = 0.0  # fraction of the reply streamed as reasoning text first
    ttft_jitter: float = 0.03  # relative standard deviation of TTFT
    itl_jitter: float = 0.10  # each inter-event gap is scaled by uniform(1 - x, 1 + x)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("sim-gpu", "GPU-class serving, ~70 tok/s", 600, 70, 5_000, 32),
        Profile("sim-wafer", "wafer-scale serving, ~750 tok/s", 200, 750, 50_000, 32),
        Profile(
            "sim-reasoning",
            "reasoning model: reasoning text first, then the answer",
            800,
            150,
            8_000,
            32,
            reasoning_share=0.4,
        ),
        Profile(
            "sim-bursty",
            "speculative decoding: 2-8 tokens per event",
            350,
            400,
            10_000,
            32,
            tokens_per_event=(2, 8),
        ),
        Profile("sim-fast", "for tests: ~2000 tok/s, TTFT ~20 ms", 20, 2_000, 100_000, 8),
    )
}

DEFAULT_REPLY_TOKENS = 2000
DEFAULT_STALL_S = 300.0
DEFAULT_RETRY_AFTER_S = 1.0


class UnknownModel(Exception):
    """The profile part of the model name is not one of PROFILES (a 404 on the wire)."""


class BadModelOption(ValueError):
    """An option after the profile name is unknown or has a bad value (a 400 on the wire)."""


@dataclass(frozen=True, slots=True)
class Options:
    tokens: int | None = None  # natural reply length; None = request max tokens capped at 2000
    ttft_ms: float | None = None  # overrides the profile's base TTFT
    tps: float | None = None  # overrides the profile's decode rate at concurrency 1
    fault: str = ""
    stall_s: float = DEFAULT_STALL_S
    retry_after_s: float = DEFAULT_RETRY_AFTER_S
    quota: int | None = None  # priority requests of this model name before a downgrade


def _positive_int(name: str, raw: str) -> int:
    if not raw.isdigit() or int(raw) < 1:
        raise BadModelOption(f"model option {name} must be a positive integer, got {raw!r}")
    return int(raw)


def _number(name: str, raw: str, *, allow_zero: bool) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise BadModelOption(f"model option {name} must be a number, got {raw!r}") from None
    if not value == value or value in (float("inf"), float("-inf")):  # NaN or infinite
        raise BadModelOption(f"model option {name} must be finite, got {raw!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise BadModelOption(f"model option {name} must be positive, got {raw!r}")
    return value


def parse_fault(raw: str) -> str:
    if raw not in FAULTS:
        known = ", ".join(sorted(FAULTS))
        raise BadModelOption(f"unknown fault {raw!r}; known faults: {known}")
    return raw


def _by_suffix(name: str) -> Profile | None:
    """`claude-sim-fast` is `sim-fast`: clients that choose their handler by the model's name
    (LiteLLM's Vertex Claude route wants `claude…`) can still reach a profile."""
    for profile_name, profile in PROFILES.items():
        if name.endswith("-" + profile_name):
            return profile
    return None


def parse_model(model: str) -> tuple[Profile, Options]:
    """Split `profile+key=value+...` into its profile and options."""
    name, *pairs = model.split("+")
    profile = PROFILES.get(name) or _by_suffix(name)
    if profile is None:
        raise UnknownModel(model)
    options = Options()
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise BadModelOption(f"model option {pair!r} must look like key=value")
        if key == "tokens":
            options = replace(options, tokens=_positive_int(key, raw))
        elif key == "ttft":
            options = replace(options, ttft_ms=_number(key, raw, allow_zero=True))
        elif key == "tps":
            options = replace(options, tps=_number(key, raw, allow_zero=False))
        elif key == "fault":
            options = replace(options, fault=parse_fault(raw))
        elif key == "stall_s":
            options = replace(options, stall_s=_number(key, raw, allow_zero=True))
        elif key == "retry_after":
            options = replace(options, retry_after_s=_number(key, raw, allow_zero=True))
        elif key == "quota":
            options = replace(options, quota=int(_number(key, raw, allow_zero=True)))
        else:
            raise BadModelOption(
                f"unknown model option {key!r}; known: tokens, ttft, tps, fault, stall_s, "
                "retry_after, quota"
            )
    return profile, options
