"""Collects one stream's events with their arrival stamps and turns them into a Measurement.

The hot path is `Recorder.on_event`: called once per SSE event, it only stores integers and
strings. Everything derived (ms offsets, percentiles, token estimates, hashes) happens once, in
`Recorder.result`, after the stream has ended.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from providers.base import (
    Adapter,
    Delta,
    End,
    ErrorCategory,
    Finish,
    ProviderLatency,
    ReasoningMode,
    ReasoningShown,
    ServedLane,
    SSEEvent,
    StreamError,
    Usage,
)
from providers.errors import clean_message
from providers.think import ThinkSplitter
from providers.tokens import estimate_tokens

from .bounds import bad_usage, bound, storable_text
from .measurement import Measurement
from .timing import NS_PER_MS, Reads, decode_tps, read_stats, tpot_ms

# Anthropic's `event: ping` carries data but is a keep-alive: it neither starts nor resets clocks.
_KEEPALIVE_EVENTS = frozenset({"ping"})
# The same ping sent data-only (`data: {"type": "ping"}`, no event line). Longer data is never
# a ping, so the check costs one length comparison on ordinary events.
_PING_MAX_CHARS = 40
# Streamed reasoning text that estimates to less than this share of the tokens the provider
# counted was a summary of the reasoning, not the reasoning itself.
_SUMMARY_SHARE = 0.5


class Recorder:
    """State of one request while it streams. All *_ns values are perf_counter_ns stamps."""

    __slots__ = (
        "adapter",
        "started_at",
        "t0_ns",
        "connect_start_ns",
        "connect_end_ns",
        "preopened_connect_ms",
        "headers_ns",
        "first_event_ns",
        "ttft_ns",
        "ttfa_ns",
        "last_token_ns",
        "end_ns",
        "last_data_ns",
        "token_ns",
        "answer",
        "reasoning",
        "think",
        "held_ns",
        "refused",
        "reasoning_shown",
        "usage",
        "finish_reason",
        "outcome",
        "finished",
        "ended",
        "error_category",
        "error_message",
        "retry_after_s",
        "http_status",
        "request_id",
        "simulated",
        "connect_address",
        "provider_latency_ms",
        "served_lane",
    )

    def __init__(self, adapter: Adapter, *, started_at: datetime, t0_ns: int) -> None:
        self.adapter = adapter
        self.started_at = started_at
        self.t0_ns = t0_ns
        self.connect_start_ns = 0
        self.connect_end_ns = 0
        self.preopened_connect_ms: float | None = None
        self.headers_ns = 0
        self.first_event_ns = 0
        self.ttft_ns = 0
        self.ttfa_ns = 0
        self.last_token_ns = 0
        self.end_ns = 0
        self.last_data_ns = t0_ns  # the idle timer counts from here
        self.token_ns: list[int] = []
        self.answer: list[str] = []
        self.reasoning: list[str] = []
        # Splits `<think>…</think>` off the start of the answer; None once the answer is known
        # not to start with it, so that ordinary streams skip it.
        self.think: ThinkSplitter | None = ThinkSplitter()
        self.held_ns = 0  # stamp of answer text held back while it could still be "<think>"
        self.refused = False  # refusal text arrived (OpenAI `refusal` deltas)
        self.reasoning_shown: set[str] = set()
        self.usage: dict[str, int] = {}
        self.finish_reason = ""
        self.outcome = ""
        self.finished = False  # a Finish item was seen
        self.ended = False  # the protocol's end marker was seen
        self.error_category = ""
        self.error_message = ""
        self.retry_after_s: float | None = None
        self.http_status: int | None = None
        self.request_id = ""
        self.simulated = False
        self.connect_address = ""
        self.provider_latency_ms: float | None = None
        self.served_lane = ""

    @property
    def stopped(self) -> bool:
        """Nothing more to read: the end marker or an error arrived."""
        return self.ended or bool(self.error_category)

    def fail(
        self, category: str, message: str, *, at_ns: int, retry_after_s: float | None = None
    ) -> None:
        """Record the first error only: later ones are consequences of it."""
        if self.error_category:
            return
        self.error_category = category
        self.error_message = message
        self.retry_after_s = retry_after_s
        if not self.end_ns:
            self.end_ns = at_ns

    def on_event(self, event: SSEEvent, ns: int) -> None:
        """One dispatched SSE event that arrived at `ns` (the stamp of its network read)."""
        stripped = event.data.lstrip()
        if not stripped or stripped[0] == ":" or event.event in _KEEPALIVE_EVENTS:
            return  # a keep-alive sent as data: no clock starts, the idle timer is not reset
        if len(stripped) <= _PING_MAX_CHARS and _is_ping(stripped):
            return
        self.last_data_ns = ns
        if not self.first_event_ns:
            self.first_event_ns = ns
        try:
            items = self.adapter.parse(event)
        except Exception as exc:  # noqa: BLE001 - an odd payload is the provider's error, kept
            self.fail(ErrorCategory.STREAM_BROKEN, f"event not understood: {exc!r}", at_ns=ns)
            return
        carried_text = False
        for item in items:
            kind = type(item)
            if kind is Delta:
                text = item.text
                if not text:
                    continue
                if item.reasoning:
                    self.reasoning.append(text)
                    carried_text = True
                    continue
                carried_text = True
                if item.refusal:
                    self.refused = True
                elif self.think is not None:
                    think = self.think
                    thought, text = think.feed(text)
                    if think.passthrough:
                        self.think = None
                    if not (think.undecided or think.passthrough):
                        self.held_ns = 0  # it was "<think>": the answer comes after </think>
                    if thought:
                        self.reasoning.append(thought)
                    if not text:
                        if think.undecided and not self.held_ns:
                            self.held_ns = ns  # maybe "<think>": if not, the answer began here
                        continue
                self.answer.append(text)
                if not self.ttfa_ns:
                    self.ttfa_ns = self.held_ns or ns
            elif kind is Usage:
                for name in ("input_tokens", "output_tokens", "reasoning_tokens", "cached_tokens"):
                    value = getattr(item, name)
                    if value is not None:
                        self.usage[name] = value
            elif kind is Finish:
                self.finished = True
                self.finish_reason = item.reason
                if item.outcome in ErrorCategory.ERRORS:
                    self.fail(item.outcome, f"finish_reason {item.reason}", at_ns=ns)
                else:
                    self.outcome = item.outcome
            elif kind is StreamError:
                self.fail(item.category, item.message, at_ns=ns, retry_after_s=item.retry_after_s)
            elif kind is ProviderLatency:
                self.provider_latency_ms = item.ms
            elif kind is End:
                self.ended = True
                if not self.end_ns:
                    self.end_ns = ns
            elif kind is ReasoningShown:
                self.reasoning_shown.add(item.mode)
            elif kind is ServedLane:
                self.served_lane = item.lane
        if carried_text:
            if not self.ttft_ns:
                self.ttft_ns = ns
            self.last_token_ns = ns
            self.token_ns.append(ns)

    def fail_with(self, error: StreamError, *, at_ns: int) -> None:
        """Record a StreamError built by providers.errors (transport, framing, HTTP errors)."""
        self.fail(error.category, error.message, at_ns=at_ns, retry_after_s=error.retry_after_s)

    def _ms(self, ns: int) -> float | None:
        return (ns - self.t0_ns) / NS_PER_MS if ns else None

    def result(self, *, secrets: tuple[str, ...]) -> Measurement:
        """The Measurement; speed fields only when the request ended cleanly (§4)."""
        if self.think is not None:
            thought, rest = self.think.close()
            if thought:
                self.reasoning.append(thought)
            if rest:
                self.answer.append(rest)
                if not self.ttfa_ns:
                    self.ttfa_ns = self.held_ns
        # A provider's bytes are checked here, once the stream is over (bounds.py).
        answer = storable_text("".join(self.answer))
        reasoning = storable_text("".join(self.reasoning))
        self._check_usage()
        output_tokens = self.usage.get("output_tokens")
        tokens_source = "usage" if output_tokens is not None else ""
        if output_tokens is None and (answer or reasoning or not self.error_category):
            output_tokens = estimate_tokens(reasoning) + estimate_tokens(answer)
            tokens_source = "estimate"
        outcome = self.outcome
        if self.refused and not self.error_category:
            outcome = ErrorCategory.REFUSED  # even after a clean finish_reason "stop"
        m = Measurement(
            started_at=self.started_at,
            t0_ns=self.t0_ns,
            connect_ms=self._connect_ms(),
            ttfb_ms=self._ms(self.headers_ns),
            first_event_ms=self._ms(self.first_event_ns),
            ttft_ms=self._ms(self.ttft_ns),
            ttfa_ms=self._ms(self.ttfa_ns),
            last_token_ms=self._ms(self.last_token_ns),
            total_ms=self._ms(self.end_ns),
            output_tokens=output_tokens,
            tokens_source=tokens_source,
            reasoning_tokens=self.usage.get("reasoning_tokens"),
            reasoning_mode=self._reasoning_mode(reasoning, answer, output_tokens, tokens_source),
            input_tokens=self.usage.get("input_tokens"),
            cached_tokens=self.usage.get("cached_tokens"),
            chunks=len(self.token_ns),
            finish_reason=self.finish_reason,
            outcome=outcome,
            http_status=self.http_status,
            error_category=self.error_category,
            error_message=clean_message(self.error_message, secrets, limit=1000)
            if self.error_message
            else "",
            retry_after_s=self.retry_after_s,
            output_chars=len(answer),
            output_sha256=hashlib.sha256(answer.encode()).hexdigest() if answer else "",
            request_id=self.request_id,
            simulated=self.simulated,
            connect_address=self.connect_address,
            provider_latency_ms=self.provider_latency_ms,
            served_lane=self.served_lane,
        )
        bound(m)
        reads = read_stats(self.token_ns)
        m.coalesced_events = reads.coalesced_events
        m.saturated = reads.saturated
        if m.ok and output_tokens:  # a refusal that streamed has a pace too (not in statistics)
            self._speed(m, output_tokens, answer, reads)
        return m

    def _check_usage(self) -> None:
        """A usage block no provider could honestly send fails the sample as malformed; its
        timings are kept and the counts it gave are dropped."""
        problem = bad_usage(self.usage)
        if problem:
            self.fail(ErrorCategory.STREAM_BROKEN, problem, at_ns=self.end_ns or self.last_data_ns)
            self.usage.clear()

    def _reasoning_mode(
        self, reasoning: str, answer: str, output_tokens: int | None, tokens_source: str
    ) -> str:
        """How the reasoning arrived (ReasoningMode): the provider's own signal first, else
        what streamed against what the provider counted."""
        shown = self.reasoning_shown
        if ReasoningMode.HIDDEN in shown:
            return ReasoningMode.HIDDEN
        if ReasoningMode.SUMMARIZED in shown:
            return ReasoningMode.SUMMARIZED
        counted = self.usage.get("reasoning_tokens")
        if reasoning:
            if counted:
                streamed = estimate_tokens(reasoning)
                return (
                    ReasoningMode.SUMMARIZED
                    if streamed < _SUMMARY_SHARE * counted
                    else ReasoningMode.STREAMED
                )
            # A chat-completions reasoning field carries the reasoning itself (llama.cpp, vLLM,
            # DeepSeek): only a protocol that can send a summary uncounted is judged by size.
            in_full = getattr(self.adapter, "reasoning_in_full", False)
            if tokens_source == "usage" and output_tokens and not in_full:
                streamed = estimate_tokens(reasoning) + estimate_tokens(answer)
                if streamed < _SUMMARY_SHARE * output_tokens:
                    return ReasoningMode.SUMMARIZED  # e.g. Claude 4's summarised thinking
            return ReasoningMode.STREAMED
        if counted or ReasoningMode.STREAMED in shown:
            return ReasoningMode.HIDDEN  # counted, or a thinking block opened, but no text
        return ReasoningMode.NONE

    def _connect_ms(self) -> float | None:
        if not self.connect_start_ns:
            if self.preopened_connect_ms is not None:
                return self.preopened_connect_ms  # opened for this request before t0
            # No connect trace: a reused keep-alive connection, if the request got an answer.
            return 0.0 if self.headers_ns else None
        if not self.connect_end_ns:
            return None  # the connection was never established
        return (self.connect_end_ns - self.connect_start_ns) / NS_PER_MS

    def _speed(self, m: Measurement, output_tokens: int, answer: str, reads: Reads) -> None:
        """decode_tps, tpot_ms, ITL and tokens per chunk over the tokens that really streamed
        (docs/design.md §4): all output tokens from TTFT when the reasoning streamed (or there was
        none); answer tokens only from TTFA when it was hidden or summarised."""
        last = m.last_token_ms
        if m.reasoning_mode in (ReasoningMode.HIDDEN, ReasoningMode.SUMMARIZED):
            start = m.ttfa_ms
            counted = m.reasoning_tokens
            if m.tokens_source == "usage" and counted is not None:
                tokens = max(output_tokens - counted, 0)
            else:
                tokens = estimate_tokens(answer)  # the provider did not say how many were hidden
        else:
            start, tokens = m.ttft_ms, output_tokens
        if start is None or last is None:
            return
        m.decode_tps = decode_tps(tokens, start_ms=start, last_token_ms=last)
        m.tpot_ms = tpot_ms(tokens, start_ms=start, last_token_ms=last)
        itl = reads.itl
        if itl is not None:
            m.itl_p50_ms, m.itl_p90_ms, m.itl_p99_ms, m.itl_max_ms = (
                itl.p50_ms,
                itl.p90_ms,
                itl.p99_ms,
                itl.max_ms,
            )
            m.itl_withheld = itl.withheld
        if reads.text_reads:
            m.tokens_per_chunk = tokens / reads.text_reads


def _is_ping(data: str) -> bool:
    """`{"type": "ping"}` sent as plain data: a keep-alive, not an event of the stream."""
    if "ping" not in data:
        return False
    try:
        obj = json.loads(data)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("type") == "ping"
