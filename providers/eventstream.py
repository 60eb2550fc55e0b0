"""Incremental decoder of AWS's binary event stream (`application/vnd.amazon.eventstream`).

The frames are parsed by botocore's `EventStreamBuffer` (prelude and message CRC32 checked),
never by hand. Like `sse.SSEDecoder`, `feed` takes one network read as it arrived and returns the
events it completed, so the measurement stamps each frame with the arrival time of the read
that completed it. Each frame becomes an `SSEEvent` whose `event` names it:

- `:message-type event`      -> event = its `:event-type` (messageStart, contentBlockDelta...)
- `:message-type exception`  -> event = its `:exception-type` (throttlingException...)
- `:message-type error`      -> event = "error", data = {"code", "message"} from its headers
- a frame that fails its checksum or lengths -> event = BROKEN_FRAME, data = what was wrong;
  nothing after it can be trusted (frame boundaries are lost), so decoding stops there.
"""

from __future__ import annotations

import json

from botocore.eventstream import EventStreamBuffer, ParserError

from .base import SSEEvent

MEDIA_TYPE = "application/vnd.amazon.eventstream"
BROKEN_FRAME = "tokspeed.brokenFrame"


class EventStreamDecoder:
    """Feed bytes as they arrive; get back the frames they complete, as events."""

    __slots__ = ("_buffer", "_broken")

    def __init__(self) -> None:
        self._buffer = EventStreamBuffer()
        self._broken = False

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Consume one network read; return the events of the frames it completed, in order."""
        if self._broken or not data:
            return []
        self._buffer.add_data(data)
        events: list[SSEEvent] = []
        try:
            for message in self._buffer:
                events.append(_event(message.headers, message.payload))
        except ParserError as exc:
            self._broken = True
            events.append(SSEEvent(BROKEN_FRAME, f"{type(exc).__name__}: {exc}"))
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: a partial frame is discarded, as an SSE decoder discards one."""
        self._buffer = EventStreamBuffer()
        return []


def _event(headers: dict[str, object], payload: bytes) -> SSEEvent:
    kind = headers.get(":message-type")
    data = payload.decode("utf-8", "replace")
    if kind == "exception":
        return SSEEvent(str(headers.get(":exception-type") or "exception"), data)
    if kind == "error":
        body = {"code": headers.get(":error-code"), "message": headers.get(":error-message")}
        return SSEEvent("error", json.dumps(body, default=str))
    return SSEEvent(str(headers.get(":event-type") or "message"), data)
