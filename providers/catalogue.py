"""Known providers: base URL, protocol, key variable and a few representative endpoints.

Prices are the providers' published list prices in USD per 1M tokens (input, output) as of
2025, stored with PRICE_NOTE so the dashboard can say where they come from; providers change
them often, so edit an endpoint in the admin when yours differ. Adding an OpenAI-compatible
vendor is one row here, no code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

PRICE_NOTE = "list price, 2025"


@dataclass(frozen=True)
class KnownEndpoint:
    model: str
    display_name: str
    price_in: str | None = None  # USD per 1M input tokens, as text to keep Decimal exact
    price_out: str | None = None  # USD per 1M output tokens
    reasoning_effort: str = ""
    max_tokens_field: str = ""
    extra_body: dict[str, Any] = field(default_factory=dict)

    @property
    def prices(self) -> tuple[Decimal | None, Decimal | None]:
        return (
            Decimal(self.price_in) if self.price_in is not None else None,
            Decimal(self.price_out) if self.price_out is not None else None,
        )


@dataclass(frozen=True)
class KnownProvider:
    slug: str
    name: str
    protocol: str
    base_url: str  # for local servers: the usual default, replaced by --local-url
    api_key_env: str = ""
    endpoints: tuple[KnownEndpoint, ...] = ()


E = KnownEndpoint
CHAT, RESPONSES, ANTHROPIC, GEMINI = (
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "gemini",
)

HOSTED: tuple[KnownProvider, ...] = (
    KnownProvider(
        "openai",
        "OpenAI",
        CHAT,
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        (
            E("gpt-4o", "GPT-4o", "2.50", "10.00"),
            E("gpt-4o-mini", "GPT-4o mini", "0.15", "0.60"),
            E("gpt-4.1", "GPT-4.1", "2.00", "8.00"),
            E("gpt-4.1-mini", "GPT-4.1 mini", "0.40", "1.60"),
            E("gpt-5-mini", "GPT-5 mini", "0.25", "2.00", reasoning_effort="minimal"),
        ),
    ),
    KnownProvider(
        "openai-responses",
        "OpenAI (Responses API)",
        RESPONSES,
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        (
            E("gpt-5", "GPT-5", "1.25", "10.00", reasoning_effort="low"),
            E("o4-mini", "o4-mini", "1.10", "4.40", reasoning_effort="medium"),
        ),
    ),
    KnownProvider(
        "anthropic",
        "Anthropic",
        ANTHROPIC,
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
        (
            E("claude-sonnet-4-5", "Claude Sonnet 4.5", "3.00", "15.00"),
            E("claude-haiku-4-5", "Claude Haiku 4.5", "1.00", "5.00"),
            E("claude-opus-4-1", "Claude Opus 4.1", "15.00", "75.00"),
        ),
    ),
    KnownProvider(
        "gemini",
        "Google Gemini",
        GEMINI,
        "https://generativelanguage.googleapis.com",
        "GEMINI_API_KEY",
        (
            E("gemini-2.5-flash", "Gemini 2.5 Flash", "0.30", "2.50"),
            E("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", "0.10", "0.40"),
            E("gemini-2.5-pro", "Gemini 2.5 Pro", "1.25", "10.00"),
        ),
    ),
    KnownProvider(
        "groq",
        "Groq",
        CHAT,
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
        (
            E("llama-3.3-70b-versatile", "Llama 3.3 70B", "0.59", "0.79"),
            E("llama-3.1-8b-instant", "Llama 3.1 8B", "0.05", "0.08"),
            E("openai/gpt-oss-120b", "gpt-oss-120b", "0.15", "0.75"),
        ),
    ),
    KnownProvider(
        "cerebras",
        "Cerebras",
        CHAT,
        "https://api.cerebras.ai/v1",
        "CEREBRAS_API_KEY",
        (
            E("llama-3.3-70b", "Llama 3.3 70B", "0.85", "1.20"),
            E("gpt-oss-120b", "gpt-oss-120b", "0.25", "0.69"),
            E("qwen-3-32b", "Qwen3 32B", "0.40", "0.80"),
        ),
    ),
    KnownProvider(
        "sambanova",
        "SambaNova",
        CHAT,
        "https://api.sambanova.ai/v1",
        "SAMBANOVA_API_KEY",
        (
            E("Meta-Llama-3.3-70B-Instruct", "Llama 3.3 70B", "0.60", "1.20"),
            E("DeepSeek-V3-0324", "DeepSeek V3", "3.00", "4.50"),
            E("Meta-Llama-3.1-8B-Instruct", "Llama 3.1 8B", "0.10", "0.20"),
        ),
    ),
    KnownProvider(
        "together",
        "Together AI",
        CHAT,
        "https://api.together.xyz/v1",
        "TOGETHER_API_KEY",
        (
            E("meta-llama/Llama-3.3-70B-Instruct-Turbo", "Llama 3.3 70B Turbo", "0.88", "0.88"),
            E("deepseek-ai/DeepSeek-V3", "DeepSeek V3", "1.25", "1.25"),
            E("openai/gpt-oss-120b", "gpt-oss-120b", "0.15", "0.60"),
        ),
    ),
    KnownProvider(
        "fireworks",
        "Fireworks AI",
        CHAT,
        "https://api.fireworks.ai/inference/v1",
        "FIREWORKS_API_KEY",
        (
            E("accounts/fireworks/models/llama-v3p3-70b-instruct", "Llama 3.3 70B", "0.90", "0.90"),
            E("accounts/fireworks/models/deepseek-v3", "DeepSeek V3", "0.90", "0.90"),
            E("accounts/fireworks/models/gpt-oss-120b", "gpt-oss-120b", "0.15", "0.60"),
        ),
    ),
    KnownProvider(
        "deepinfra",
        "DeepInfra",
        CHAT,
        "https://api.deepinfra.com/v1/openai",
        "DEEPINFRA_API_KEY",
        (
            E("meta-llama/Llama-3.3-70B-Instruct-Turbo", "Llama 3.3 70B Turbo", "0.13", "0.39"),
            E("deepseek-ai/DeepSeek-V3", "DeepSeek V3", "0.38", "0.89"),
            E("openai/gpt-oss-120b", "gpt-oss-120b", "0.09", "0.45"),
        ),
    ),
    KnownProvider(
        "openrouter",
        "OpenRouter",
        CHAT,
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        (
            E("openai/gpt-4o-mini", "GPT-4o mini via OpenRouter", "0.15", "0.60"),
            E("anthropic/claude-sonnet-4.5", "Claude Sonnet 4.5 via OpenRouter", "3.00", "15.00"),
            E("meta-llama/llama-3.3-70b-instruct", "Llama 3.3 70B via OpenRouter", "0.13", "0.40"),
        ),
    ),
    KnownProvider(
        "mistral",
        "Mistral AI",
        CHAT,
        "https://api.mistral.ai/v1",
        "MISTRAL_API_KEY",
        (
            E("mistral-large-latest", "Mistral Large", "2.00", "6.00"),
            E("mistral-medium-latest", "Mistral Medium", "0.40", "2.00"),
            E("mistral-small-latest", "Mistral Small", "0.10", "0.30"),
        ),
    ),
    KnownProvider(
        "deepseek",
        "DeepSeek",
        CHAT,
        "https://api.deepseek.com",
        "DEEPSEEK_API_KEY",
        (
            E("deepseek-chat", "DeepSeek V3 (chat)", "0.27", "1.10"),
            E("deepseek-reasoner", "DeepSeek R1 (reasoner)", "0.55", "2.19"),
        ),
    ),
    KnownProvider(
        "xai",
        "xAI",
        CHAT,
        "https://api.x.ai/v1",
        "XAI_API_KEY",
        (
            E("grok-4", "Grok 4", "3.00", "15.00"),
            E("grok-3-mini", "Grok 3 mini", "0.30", "0.50"),
            E("grok-code-fast-1", "Grok Code Fast 1", "0.20", "1.50"),
        ),
    ),
)

# Local servers: no key, no prices; models are found with GET {base_url}/models or given.
LOCAL: tuple[KnownProvider, ...] = (
    KnownProvider("vllm", "vLLM", CHAT, "http://localhost:8000/v1"),
    KnownProvider("sglang", "SGLang", CHAT, "http://localhost:30000/v1"),
    KnownProvider("llamacpp", "llama.cpp", CHAT, "http://localhost:8080/v1"),
    KnownProvider("ollama", "Ollama", CHAT, "http://localhost:11434/v1"),
)

CATALOGUE: tuple[KnownProvider, ...] = HOSTED + LOCAL
