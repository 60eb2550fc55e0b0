"""One small module per wire protocol: request parsing, error bodies and a stream encoder."""

from types import ModuleType

from . import anthropic_messages, gemini, openai_chat, openai_responses

PROTOCOLS: dict[str, ModuleType] = {
    module.NAME: module for module in (openai_chat, openai_responses, anthropic_messages, gemini)
}
