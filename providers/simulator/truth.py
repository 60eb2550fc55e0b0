"""What the simulator really did for each request, for comparison with client measurements.

Every *_ns value is `time.perf_counter_ns()` (CLOCK_MONOTONIC, comparable across processes on
Linux) read just before the bytes were handed to the transport. Events are kept in compact
arrays (11 bytes each) because a 2,000-token reply makes 2,000 of them.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from typing import Any

# Event kinds; the index is what the compact array stores.
KINDS = (
    "meta",  # protocol bookkeeping without tokens (message_start, block starts...)
    "reasoning",
    "text",
    "comment",
    "end",  # the protocol's normal end (with the finish reason and usage)
    "error",  # mid-stream error event, or the HTTP error response itself
    "malformed",
    "stall",
    "drop",
    "body",  # a non-SSE body (fault not_sse)
)
KIND = {name: index for index, name in enumerate(KINDS)}

KEEP_REQUESTS = 10_000


class TruthRecord:
    __slots__ = (
        "request_id",
        "protocol",
        "model",
        "status",
        "fault",
        "prompt_tokens",
        "user_chars",
        "system_chars",
        "tool_names",
        "lane",
        "received_ns",
        "headers_ns",
        "first_token_ns",
        "last_token_ns",
        "end_ns",
        "output_tokens",
        "reasoning_tokens",
        "finish_reason",
        "outcome",
        "max_lag_ns",
        "lag_sum_ns",
        "lag_count",
        "paced_min_tps",
        "paced_max_tps",
        "_t",
        "_kind",
        "_tokens",
    )

    def __init__(self, request_id: str, protocol: str, received_ns: int) -> None:
        self.request_id = request_id
        self.protocol = protocol
        self.model = ""
        self.status: int | None = None
        self.fault = ""
        self.prompt_tokens = 0
        # Where the request put its parts (the protocol's own places): user text, system, tools.
        self.user_chars = 0
        self.system_chars = 0
        self.tool_names: tuple[str, ...] = ()
        self.lane = "standard"  # the lane served
        self.received_ns = received_ns
        self.headers_ns: int | None = None
        self.first_token_ns: int | None = None
        self.last_token_ns: int | None = None
        self.end_ns: int | None = None
        self.output_tokens = 0
        self.reasoning_tokens = 0
        self.finish_reason = ""
        self.outcome = "in_progress"
        self.max_lag_ns = 0  # worst lateness of a token write against its schedule
        self.lag_sum_ns = 0
        self.lag_count = 0
        # The per-user decode rate its token gaps were scheduled at (before ITL jitter), lowest
        # and highest over the stream: it falls only with the load of this record's deployment.
        self.paced_min_tps = float("inf")
        self.paced_max_tps = 0.0
        self._t = array("q")
        self._kind = array("b")
        self._tokens = array("i")

    def lag(self, lag_ns: int) -> None:
        """How late (ns) a token write ran against its scheduled deadline."""
        self.lag_sum_ns += lag_ns
        self.lag_count += 1
        if lag_ns > self.max_lag_ns:
            self.max_lag_ns = lag_ns

    def pace(self, tps: float) -> None:
        """The decode rate (tokens/s, before jitter) the next token gap was scheduled at."""
        if tps < self.paced_min_tps:
            self.paced_min_tps = tps
        if tps > self.paced_max_tps:
            self.paced_max_tps = tps

    def add(self, t_ns: int, kind: int, tokens: int = 0) -> None:
        """Record one write; token-carrying kinds also advance the token counters."""
        self._t.append(t_ns)
        self._kind.append(kind)
        self._tokens.append(tokens)
        if tokens:
            if self.first_token_ns is None:
                self.first_token_ns = t_ns
            self.last_token_ns = t_ns
            self.output_tokens += tokens
            if kind == 1:  # reasoning
                self.reasoning_tokens += tokens

    def as_dict(self) -> dict[str, Any]:
        events = [
            {"t_ns": t, "kind": KINDS[k], "tokens": n}
            for t, k, n in zip(self._t, self._kind, self._tokens, strict=True)
        ]
        return {
            "request_id": self.request_id,
            "protocol": self.protocol,
            "model": self.model,
            "simulated": True,
            "status": self.status,
            "fault": self.fault,
            "outcome": self.outcome,
            "prompt_tokens": self.prompt_tokens,
            "user_chars": self.user_chars,
            "system_chars": self.system_chars,
            "tool_names": list(self.tool_names),
            "lane": self.lane,
            "received_ns": self.received_ns,
            "headers_ns": self.headers_ns,
            "first_token_ns": self.first_token_ns,
            "last_token_ns": self.last_token_ns,
            "end_ns": self.end_ns,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "finish_reason": self.finish_reason,
            "max_lag_ms": self.max_lag_ns / 1e6,
            "mean_lag_ms": self.lag_sum_ns / self.lag_count / 1e6 if self.lag_count else 0.0,
            "paced_min_tps": self.paced_min_tps if self.paced_max_tps else None,
            "paced_max_tps": self.paced_max_tps or None,
            "events": events,
        }


class TruthStore:
    """The last KEEP_REQUESTS records, oldest evicted first."""

    def __init__(self, keep: int = KEEP_REQUESTS) -> None:
        self._keep = keep
        self._records: OrderedDict[str, TruthRecord] = OrderedDict()

    def add(self, record: TruthRecord) -> None:
        self._records[record.request_id] = record
        while len(self._records) > self._keep:
            self._records.popitem(last=False)

    def get(self, request_id: str) -> TruthRecord | None:
        return self._records.get(request_id)

    def __len__(self) -> int:
        return len(self._records)
