"""Incremental Server-Sent Events decoder over raw bytes (WHATWG event-stream interpretation).

Written here rather than taken from httpx-sse because the measurement stamps the clock on every
network read and then hands the bytes straight to `SSEDecoder.feed`; the decoder must accept
arbitrary byte splits and stay cheap. `feed` works on whole chunks with bytes.find/split and
str.split; the only Python loop is over complete lines (about two per event).

Rules (docs/protocols.md §1): lines end with CRLF, CR or LF (a CR ending one read followed by an LF
starting the next is one line end); a UTF-8 character may be split across reads; `:` lines are
comments; `data` lines are joined with "\\n"; an event is dispatched on an empty line only if it
had at least one `data` line; an undispatched event at end of stream is discarded.
"""

from __future__ import annotations

from .base import SSEEvent

_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Feed bytes as they arrive; get back the events they complete."""

    __slots__ = ("_buffer", "_skip_lf", "_started", "_data", "_event", "_last_id", "retry_ms")

    def __init__(self) -> None:
        self._buffer = b""  # bytes of an unterminated line (never contains CR or LF)
        self._skip_lf = False  # previous read ended with CR: an LF starting this one is its pair
        self._started = False  # leading BOM handled
        self._data: list[str] = []
        self._event = ""
        self._last_id = ""
        self.retry_ms: int | None = None  # last valid `retry:` field (reconnection delay)

    @property
    def pending(self) -> bool:
        """True while an event or a line has started but not been completed."""
        return bool(self._buffer or self._data or self._event)

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Consume one network read; return the events it completed, in order."""
        if not data:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if data[:1] == b"\n":
                data = data[1:]
        if self._buffer:
            data = self._buffer + data
            self._buffer = b""
        if not self._started:
            if len(data) < len(_BOM) and _BOM.startswith(data):
                self._buffer = data  # could still be a BOM split across reads
                return []
            self._started = True
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
        if b"\r" in data:
            if data.endswith(b"\r"):
                self._skip_lf = True
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        cut = data.rfind(b"\n")
        if cut < 0:
            self._buffer = data
            return []
        if cut + 1 < len(data):
            self._buffer = data[cut + 1 :]
        # LF and CR never occur inside a multi-byte UTF-8 sequence, so complete lines decode whole.
        lines = data[:cut].decode("utf-8", "replace").split("\n")
        return self._process(lines)

    def close(self) -> list[SSEEvent]:
        """End of stream: an incomplete event is discarded (never dispatched), per the spec."""
        self._buffer = b""
        self._skip_lf = False
        self._data = []
        self._event = ""
        return []

    def _process(self, lines: list[str]) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(
                        SSEEvent(self._event or "message", "\n".join(data), self._last_id)
                    )
                    data = self._data = []
                self._event = ""
                continue
            if line[0] == ":":
                continue  # comment / keep-alive
            name, colon, value = line.partition(":")
            if colon and value[:1] == " ":
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                self._event = value
            elif name == "id":
                if "\0" not in value:
                    self._last_id = value
            elif name == "retry" and value.isascii() and value.isdigit():
                self.retry_ms = int(value)
        return events
