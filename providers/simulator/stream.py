"""The hot path: one simulated stream driven by a shared timer, writing straight to the socket.

Each token event is a callback scheduled on the Ticker against an absolute deadline, so a late
callback does not push later events back. A callback encodes the event from pre-serialised bytes,
frames it as one HTTP/1.1 chunk, reads `perf_counter_ns()` and hands it to the transport at once;
no coroutine, future or JSON encoding per token. The request handler owns the headers and the
final write (see server.py).
"""

from __future__ import annotations

import asyncio
import random
from time import perf_counter_ns

from .faults import MID_STREAM_FAULTS
from .lanes import LaneQuota
from .plan import Controls, Plan
from .protocols.common import Encoder
from .textgen import answer_source, reasoning_source
from .ticker import Entry, Ticker
from .truth import KIND, TruthRecord

_REASONING, _TEXT, _META, _COMMENT = KIND["reasoning"], KIND["text"], KIND["meta"], KIND["comment"]
_MALFORMED, _STALL, _DROP = KIND["malformed"], KIND["stall"], KIND["drop"]

WRITE_BUFFER_LIMIT = 256 * 1024  # a client this far behind gets no more events until it reads
KEEPALIVE_EVERY_S = 0.05  # comments fault: keep-alive comments while the model "prefills"
COMMENT_EVERY_EVENTS = 7  # comments fault: a comment before every 7th token event


class Simulation:
    """State shared by all streams of one server: batching load, runtime controls, the ticker.

    Load is per deployment (the model a request names, options included): each simulated
    endpoint is its own server, so endpoints measured at the same time do not slow each other.
    """

    def __init__(self) -> None:
        self.active: dict[str, int] = {}  # per deployment: streams between headers and end
        self.controls = Controls()
        self.quota = LaneQuota()  # priority requests served per model name (`+quota=N`)
        self._ticker: Ticker | None = None

    @property
    def ticker(self) -> Ticker:
        if self._ticker is None:  # created lazily: it needs the running loop
            self._ticker = Ticker(asyncio.get_running_loop())
        return self._ticker

    def decode_rate(self, plan: Plan, deployment: str) -> float:
        """Per-user tokens/s now: the deployment's aggregate saturates at tps * batch_knee."""
        load = 1.0 + max(0, self.active.get(deployment, 0) - 1) / plan.batch_knee
        return plan.tps * self.controls.speed_factor / load


class SimStream:
    """Streams one planned reply; `done` resolves to (kind, tail bytes) or None (no tail)."""

    def __init__(
        self,
        *,
        sim: Simulation,
        plan: Plan,
        encoder: Encoder,
        transport: asyncio.Transport,
        record: TruthRecord,
        start: float,
        comments: bool,
    ) -> None:
        self.sim = sim
        self.plan = plan
        self.encoder = encoder
        self.transport = transport
        self.record = record
        self.comments = comments
        self.loop = asyncio.get_running_loop()
        self.done: asyncio.Future[tuple[str, bytes] | None] = self.loop.create_future()
        self._deadline = start + plan.ttft_s
        self._sent = 0
        self._events = 0
        self._fault_pending = plan.fault in MID_STREAM_FAULTS
        self._ticker = sim.ticker
        self._handle: Entry | None = None
        self._keepalive: asyncio.TimerHandle | None = None
        self._begun = False
        self._over = False
        self._answer = answer_source()
        self._reasoning = reasoning_source()

    # --- lifecycle ------------------------------------------------------------------------

    def begin(self) -> None:
        """Called right after the headers went out: preamble events, then the first token."""
        active = self.sim.active
        active[self.record.model] = active.get(self.record.model, 0) + 1
        self._begun = True
        preamble = self.encoder.start()
        if self.comments:
            self._write(self.encoder.comment() + preamble, _META if preamble else _COMMENT)
        elif preamble:
            self._write(preamble, _META)
        if self.comments:
            self._keepalive = self.loop.call_later(KEEPALIVE_EVERY_S, self._send_keepalive)
        self._handle = self._ticker.at(self._deadline, self._step)

    def cancel(self, outcome: str = "client_closed") -> None:
        """Stop whatever is scheduled (the client went away or the handler was cancelled)."""
        if not self._over:
            self.record.outcome = outcome
            self._finish(None)

    def _finish(self, result: tuple[str, bytes] | None) -> None:
        if self._over:
            return
        self._over = True
        Ticker.cancel(self._handle)
        if self._keepalive is not None:
            self._keepalive.cancel()
        self._handle = self._keepalive = None
        if self._begun:
            active = self.sim.active
            left = active[self.record.model] - 1
            if left:
                active[self.record.model] = left
            else:
                del active[self.record.model]
        # A cancelled handler cancels the future it awaited: `done` may be settled already.
        if not self.done.done():
            self.done.set_result(result)

    # --- writing --------------------------------------------------------------------------

    def _write(self, payload: bytes, kind: int, tokens: int = 0) -> None:
        if not payload:
            return  # an empty chunk would end the chunked body (the event stream has no comments)
        frame = b"%x\r\n%b\r\n" % (len(payload), payload)
        t_ns = perf_counter_ns()
        self.transport.write(frame)
        self.record.add(t_ns, kind, tokens)

    def _send_keepalive(self) -> None:
        self._keepalive = None
        if self._sent or self.transport.is_closing():
            return
        self._write(self.encoder.comment(), _COMMENT)
        if self.loop.time() + KEEPALIVE_EVERY_S < self._deadline:
            self._keepalive = self.loop.call_later(KEEPALIVE_EVERY_S, self._send_keepalive)

    def _step(self) -> None:
        self._handle = None
        transport = self.transport
        if transport.is_closing():
            self.cancel()
            return
        now = self.loop.time()
        if transport.get_write_buffer_size() > WRITE_BUFFER_LIMIT:
            self._handle = self._ticker.at(now + 0.005, self._step)
            return
        self.record.lag(int((now - self._deadline) * 1e9))
        plan = self.plan
        sent = self._sent
        if self._fault_pending and sent >= plan.fault_at:
            self._fault_pending = False
            if self._strike(now):
                return

        low, high = plan.tokens_per_event
        n = low if low == high else random.randint(low, high)
        reasoning = sent < plan.reasoning_tokens
        n = min(n, (plan.reasoning_tokens if reasoning else plan.send_tokens) - sent)
        encoder = self.encoder
        prefix = b""
        if sent == 0:
            prefix = encoder.begin(reasoning=reasoning, first=True)
        elif sent == plan.reasoning_tokens:
            prefix = encoder.end(reasoning=True) + encoder.begin(reasoning=False, first=False)
        if self.comments and self._events % COMMENT_EVERY_EVENTS == COMMENT_EVERY_EVENTS - 1:
            prefix = encoder.comment(b"OPENROUTER PROCESSING") + prefix
        text = (self._reasoning if reasoning else self._answer).take(n)
        kind = _REASONING if reasoning else _TEXT
        self._write(prefix + encoder.delta(text, reasoning, n), kind, n)
        self._sent = sent = sent + n
        self._events += 1

        if sent >= plan.send_tokens:
            tail = encoder.end(reasoning=reasoning) + encoder.finish(
                truncated=plan.truncated, output_tokens=sent, reasoning_tokens=plan.reasoning_tokens
            )
            self._finish(("end", encoder.comment() + tail if self.comments else tail))
            return
        rate = self.sim.decode_rate(plan, self.record.model)
        self.record.pace(rate)  # after the write: nothing between a token and its send
        gap = n / rate
        if plan.itl_jitter:
            gap *= 1.0 + plan.itl_jitter * (2.0 * random.random() - 1.0)
        self._deadline += gap
        self._handle = self._ticker.at(self._deadline, self._step)

    def _strike(self, now: float) -> bool:
        """Apply the mid-stream fault; True when this step must not send a token."""
        fault = self.plan.fault
        if fault == "stall":
            self.record.add(perf_counter_ns(), _STALL)
            self._deadline = now + self.plan.stall_s
            self._handle = self._ticker.at(self._deadline, self._step)
            return True
        if fault == "drop":
            t_ns = perf_counter_ns()
            self.transport.close()  # flushes what was sent, then FIN: the chunked body is cut
            self.record.add(t_ns, _DROP)
            self.record.end_ns = t_ns
            self.record.outcome = "drop"
            self._finish(None)
            return True
        if fault == "content_filter":
            # Only Chat encoders speak it (faults.PROTOCOL_FAULTS): the reply stops here.
            sent, reasoning = self._sent, self.plan.reasoning_tokens
            tail = self.encoder.end(reasoning=sent <= reasoning) + self.encoder.filtered(
                output_tokens=sent, reasoning_tokens=min(sent, reasoning)
            )
            self._finish(("end", tail))
            return True
        if fault == "error_event":
            self._finish(("error", self.encoder.error_event()))
            return True
        # malformed: one broken data event, then the stream goes on
        self._write(self.encoder.malformed(), _MALFORMED)
        return False
