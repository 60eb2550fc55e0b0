"""Protocol name -> adapter: the one lookup every caller uses."""

from __future__ import annotations

from . import anthropic_messages, gemini, openai_chat, openai_responses
from .base import Adapter

ADAPTERS: dict[str, Adapter] = {
    module.adapter.name: module.adapter
    for module in (openai_chat, openai_responses, anthropic_messages, gemini)
}


def get_adapter(protocol: str) -> Adapter:
    """The adapter for a Provider.protocol value; ValueError naming the known ones otherwise."""
    try:
        return ADAPTERS[protocol]
    except KeyError:
        known = ", ".join(sorted(ADAPTERS))
        raise ValueError(f"Unknown protocol {protocol!r}; known protocols: {known}.") from None
