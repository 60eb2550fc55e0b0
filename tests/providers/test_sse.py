"""The SSE decoder: WHATWG framing over arbitrary byte splits (docs/protocols.md §1)."""

from __future__ import annotations

import pytest

from providers.base import SSEEvent
from providers.sse import SSEDecoder
from tests.adapter_contract import transcript


def decode(*reads: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for read in reads:
        events += decoder.feed(read)
    return events + decoder.close()


def datas(events: list[SSEEvent]) -> list[str]:
    return [e.data for e in events]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_it_accepts_every_line_terminator(newline: bytes) -> None:
    stream = newline.join([b"event: a", b"data: one", b"", b"data: two", b"", b""])
    events = decode(stream)
    assert events == [SSEEvent("a", "one"), SSEEvent("message", "two")]


def test_it_treats_cr_at_end_of_a_read_and_lf_at_start_of_the_next_as_one_line_end() -> None:
    # Counted twice, the CRLF would be an empty line and split the event in two.
    events = decode(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")
    assert datas(events) == ["a\nb"]


def test_it_keeps_a_lone_cr_as_a_line_end_even_when_the_next_read_starts_with_data() -> None:
    events = decode(b"data: a\r", b"\r", b"data: b\n\n")
    assert datas(events) == ["a", "b"]


def test_it_ignores_comments_and_keepalives() -> None:
    events = decode(b": OPENROUTER PROCESSING\n\n: keep-alive\r\n\r\ndata: x\n: ping\n\n")
    assert datas(events) == ["x"]


def test_it_joins_multi_line_data_with_newlines() -> None:
    assert datas(decode(b'data: {\ndata:  "a": 1\ndata: }\n\n')) == ['{\n "a": 1\n}']


def test_it_removes_exactly_one_leading_space_and_accepts_no_space() -> None:
    assert datas(decode(b"data:x\n\ndata:  y\n\n")) == ["x", " y"]


def test_it_dispatches_empty_data_but_not_an_event_without_data() -> None:
    events = decode(b"event: ping\n\ndata\n\ndata:\n\n")
    assert events == [SSEEvent("message", ""), SSEEvent("message", "")]


def test_it_resets_the_event_type_but_keeps_the_last_id() -> None:
    events = decode(b"event: e\nid: 7\ndata: 1\n\ndata: 2\n\nid: bad\x00id\ndata: 3\n\n")
    assert events == [
        SSEEvent("e", "1", "7"),
        SSEEvent("message", "2", "7"),
        SSEEvent("message", "3", "7"),
    ]


def test_it_reads_retry_and_ignores_unknown_fields() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"retry: 2500\nfoo: bar\nretry: soon\ndata: x\n\n")
    assert datas(events) == ["x"]
    assert decoder.retry_ms == 2500


def test_it_decodes_a_utf8_character_split_across_reads() -> None:
    payload = "data: naïve café — 東京 🚀\n\n".encode()
    for cut in range(1, len(payload)):
        assert datas(decode(payload[:cut], payload[cut:])) == ["naïve café — 東京 🚀"]


def test_it_does_not_break_lines_on_unicode_separators() -> None:
    assert datas(decode("data: a\u2028b\u0085c\n\n".encode())) == ["a\u2028b\u0085c"]


def test_it_discards_an_incomplete_event_at_close() -> None:
    decoder = SSEDecoder()
    assert datas(decoder.feed(b"data: whole\n\ndata: cut off\n")) == ["whole"]
    assert decoder.pending
    assert decoder.close() == []
    assert not decoder.pending


def test_it_discards_an_unterminated_last_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"partial') == []
    assert decoder.pending
    assert decoder.close() == []


def test_it_strips_a_leading_bom_even_split_across_reads() -> None:
    assert decode(b"\xef", b"\xbb", b"\xbfdata: x\n\n") == [SSEEvent("message", "x")]
    # A BOM later in the stream is data, not framing.
    assert datas(decode(b"data: x\n\n\xef\xbb\xbfdata: y\n\n")) == ["x"]


@pytest.mark.parametrize("name", ["openai_chat", "anthropic_messages", "gemini"])
def test_it_gives_the_same_events_for_a_transcript_split_at_every_byte(name: str) -> None:
    data = transcript(name)
    whole = decode(data)
    assert len(whole) >= 3
    assert all(e.data.startswith("{") or e.data == "[DONE]" for e in whole)
    for cut in range(1, len(data)):
        assert decode(data[:cut], data[cut:]) == whole, f"split at byte {cut}"
    assert decode(*(data[i : i + 1] for i in range(len(data)))) == whole


def test_it_handles_many_events_in_one_read() -> None:
    stream = b"".join(b"data: %d\r\n\r\n" % i for i in range(1000))
    assert datas(decode(stream)) == [str(i) for i in range(1000)]
