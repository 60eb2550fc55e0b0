"""Protocol name -> adapter: the one lookup every caller uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from importlib import import_module
from typing import Protocol

from .base import Adapter, SSEEvent
from .sse import SSEDecoder

SSE_MEDIA_TYPE = "text/event-stream"

# Protocol name -> the module that holds its adapter. A module is imported the first time one of
# its protocols is asked for, so a plain OpenAI-compatible run never loads botocore or the cloud
# adapters (bench/startup.py measures what that saves).
MODULES = {
    "openai_chat": "openai_chat",
    "openai_responses": "openai_responses",
    "anthropic_messages": "anthropic_messages",
    "gemini": "gemini",
    "bedrock_converse": "bedrock",
    "azure_openai": "azure_openai",
    "azure_openai_responses": "azure_openai",
    "vertex_gemini": "vertex",
    "vertex_anthropic": "vertex",
}


class LazyAdapters(Mapping[str, Adapter]):
    """Every protocol's adapter, each module imported on first use."""

    def __init__(self, modules: dict[str, str]) -> None:
        self._modules = modules
        self._loaded: dict[str, Adapter] = {}

    def __getitem__(self, protocol: str) -> Adapter:
        if protocol not in self._loaded:
            module = import_module(f"{__package__}.{self._modules[protocol]}")
            for adapter in getattr(module, "adapters", None) or (module.adapter,):
                self._loaded[adapter.name] = adapter
        return self._loaded[protocol]

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __contains__(self, protocol: object) -> bool:
        return protocol in self._modules


ADAPTERS: Mapping[str, Adapter] = LazyAdapters(MODULES)


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
