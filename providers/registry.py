"""Protocol name -> adapter: the one lookup every caller uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from . import (
    anthropic_messages,
    azure_openai,
    bedrock,
    gemini,
    openai_chat,
    openai_responses,
    vertex,
)
from .base import Adapter, SSEEvent
from .sse import SSEDecoder

SSE_MEDIA_TYPE = "text/event-stream"

ADAPTERS: dict[str, Adapter] = {
    module.adapter.name: module.adapter
    for module in (openai_chat, openai_responses, anthropic_messages, gemini, bedrock)
}
ADAPTERS.update({a.name: a for a in (*azure_openai.adapters, *vertex.adapters)})


class Decoder(Protocol):
    def feed(self, data: bytes) -> list[SSEEvent]: ...
    def close(self) -> list[SSEEvent]: ...


def get_adapter(protocol: str) -> Adapter:
    """The adapter for a Provider.protocol value; ValueError naming the known ones otherwise."""
    try:
        return ADAPTERS[protocol]
    except KeyError:
        known = ", ".join(sorted(ADAPTERS))
        raise ValueError(f"Unknown protocol {protocol!r}; known protocols: {known}.") from None


def stream_format(adapter: Adapter) -> tuple[str, Callable[[], Decoder]]:
    """(media type the stream answers with, decoder factory): SSE unless the adapter says."""
    return (
        getattr(adapter, "media_type", SSE_MEDIA_TYPE),
        getattr(adapter, "new_decoder", SSEDecoder),
    )
