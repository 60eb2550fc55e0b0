"""What one simulated request will do: its timing, reply length and fault, fixed up front."""

from __future__ import annotations

import random
from dataclasses import dataclass

from .faults import ASYNC_FILTER_TOKENS_PER_EVENT, fault_at
from .lanes import SPEED as LANE_SPEED
from .profiles import DEFAULT_REPLY_TOKENS, Options, Profile
from .protocols.common import ParsedRequest, prompt_tokens


@dataclass(frozen=True, slots=True)
class Controls:
    """Runtime multipliers set through POST /_sim/control (1.0 = the profiles as defined)."""

    speed_factor: float = 1.0  # multiplies every decode rate, in-flight streams included
    ttft_factor: float = 1.0  # multiplies the TTFT of requests that start from now on


@dataclass(frozen=True, slots=True)
class Plan:
    prompt_tokens: int
    ttft_s: float  # from the arrival of the request to the first token
    tps: float  # per-user decode rate at concurrency 1, before speed_factor
    batch_knee: float
    tokens_per_event: tuple[int, int]
    itl_jitter: float
    send_tokens: int  # tokens that will be streamed (reasoning included)
    reasoning_tokens: int  # the first `reasoning_tokens` of them are reasoning text
    truncated: bool  # the request's max tokens cut the natural reply
    fault: str
    fault_at: int
    stall_s: float


def make_plan(
    profile: Profile, options: Options, request: ParsedRequest, *, fault: str, controls: Controls
) -> Plan:
    limit = request.max_tokens
    # The natural reply is 2,000 tokens (what the standard prompt asks for) unless +tokens=N;
    # a smaller max tokens cuts it, as it would cut a real model (finish reason "length").
    natural = options.tokens or DEFAULT_REPLY_TOKENS
    send = min(natural, limit) if limit else natural
    reasoning = 0
    if profile.reasoning_share > 0 and natural >= 2:
        reasoning = min(natural - 1, max(1, round(natural * profile.reasoning_share)))
    prompt = prompt_tokens(request.input_chars)
    base_ms = profile.ttft_ms if options.ttft_ms is None else options.ttft_ms
    ttft_factor, tps_factor = LANE_SPEED.get(request.lane, (1.0, 1.0))
    ttft_ms = (base_ms + prompt / profile.prefill_tps * 1000.0) * controls.ttft_factor
    ttft_ms *= ttft_factor
    # Clipped at three standard deviations so a test's tolerance can be derived from the profile.
    jitter = max(-3.0, min(3.0, random.gauss(0.0, 1.0))) * profile.ttft_jitter
    return Plan(
        prompt_tokens=prompt,
        ttft_s=max(0.0, ttft_ms * (1.0 + jitter)) / 1000.0,
        tps=(options.tps or profile.tps) * tps_factor,
        batch_knee=profile.batch_knee,
        tokens_per_event=(
            ASYNC_FILTER_TOKENS_PER_EVENT if fault == "async_filter" else profile.tokens_per_event
        ),
        itl_jitter=profile.itl_jitter,
        send_tokens=send,
        reasoning_tokens=min(reasoning, send),
        truncated=send < natural,
        fault=fault,
        fault_at=fault_at(send),
        stall_s=options.stall_s,
    )
