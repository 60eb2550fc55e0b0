"""OpenRouter's names for tokspeed's providers and models, for the `openrouter` feed.

OpenRouter routes a request by its own model ids ("meta-llama/llama-3.3-70b-instruct") and its
own provider slugs ("google-vertex", "amazon-bedrock"); tokspeed's catalogue uses each
provider's model ids and its own slugs. An endpoint gets OpenRouter names only where both its
provider and its model have one: a simulated endpoint, a local server, a team's custom provider
or a model OpenRouter does not list has none, and the feed says so rather than guess.
"""

from __future__ import annotations

import re

from providers.models import model_family

# tokspeed provider slug -> OpenRouter provider slug (where they differ, and where they agree).
PROVIDERS: dict[str, str] = {
    "openai": "openai",
    "openai-responses": "openai",
    "azure-openai": "azure",
    "anthropic": "anthropic",
    "gemini": "google-ai-studio",
    "vertex-gemini": "google-vertex",
    "vertex-anthropic": "google-vertex",
    "aws-bedrock": "amazon-bedrock",
    "groq": "groq",
    "cerebras": "cerebras",
    "sambanova": "sambanova",
    "together": "together",
    "fireworks": "fireworks",
    "deepinfra": "deepinfra",
    "mistral": "mistral",
    "deepseek": "deepseek",
    "xai": "xai",
}

# A model's name (display name without its route, or its id) -> OpenRouter's model id.
_MODELS: dict[str, str] = {
    "GPT-4o": "openai/gpt-4o",
    "GPT-4o mini": "openai/gpt-4o-mini",
    "GPT-4.1": "openai/gpt-4.1",
    "GPT-4.1 mini": "openai/gpt-4.1-mini",
    "GPT-5": "openai/gpt-5",
    "GPT-5 mini": "openai/gpt-5-mini",
    "o4-mini": "openai/o4-mini",
    "gpt-oss-120b": "openai/gpt-oss-120b",
    "Claude Sonnet 4.5": "anthropic/claude-sonnet-4.5",
    "Claude Haiku 4.5": "anthropic/claude-haiku-4.5",
    "Claude Opus 4.1": "anthropic/claude-opus-4.1",
    "Gemini 2.5 Flash": "google/gemini-2.5-flash",
    "Gemini 2.5 Flash-Lite": "google/gemini-2.5-flash-lite",
    "Gemini 2.5 Pro": "google/gemini-2.5-pro",
    "Llama 3.3 70B": "meta-llama/llama-3.3-70b-instruct",
    "Llama 3.3 70B Turbo": "meta-llama/llama-3.3-70b-instruct",
    "Llama 3.3 70B Instruct": "meta-llama/llama-3.3-70b-instruct",
    "Llama 3.1 8B": "meta-llama/llama-3.1-8b-instruct",
    "Qwen3 32B": "qwen/qwen3-32b",
    "DeepSeek V3": "deepseek/deepseek-chat",
    "DeepSeek R1": "deepseek/deepseek-r1",
    "Nova Pro": "amazon/nova-pro-v1",
    "Mistral Large": "mistralai/mistral-large",
    "Grok 4": "x-ai/grok-4",
    "Grok 3 mini": "x-ai/grok-3-mini",
    "Grok Code Fast 1": "x-ai/grok-code-fast-1",
}
_ROUTE = re.compile(r"\s+on\s+.*$", re.IGNORECASE)  # "… on Bedrock", "… on Azure (…)"


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name).casefold().strip()


MODELS = {_key(name): slug for name, slug in _MODELS.items()}
OPENROUTER_IDS = frozenset(_MODELS.values())


def provider_name(provider_slug: str) -> str | None:
    return PROVIDERS.get(provider_slug)


def model_name(model: str, display_name: str, provider_slug: str) -> str | None:
    """OpenRouter's id for the model an endpoint serves, or None when it lists none we know."""
    if provider_slug == "openrouter" or model.casefold() in OPENROUTER_IDS:
        return model.casefold() if model.casefold() in OPENROUTER_IDS else model
    for name in (display_name, model):
        if not name:
            continue
        family = _ROUTE.sub("", model_family(name))
        if (slug := MODELS.get(_key(family))) is not None:
            return slug
    return None
