"""The standard prompt (docs/design.md §3), its nonce line, neutral context padding, and a
custom workload's text: suite, system prompt, real context and tools (docs/workloads.md)."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from providers.prompt import Prompt, Tool, tool_from_dict

STANDARD_PROMPT = (
    "Write a complete Python module implementing a rate limiter with three strategies (fixed "
    "window, sliding window, token bucket), a shared abstract base class, type hints throughout, "
    "docstrings, and a pytest test suite covering edge cases (burst traffic, clock skew, "
    "zero-capacity buckets). Target roughly 2,000 tokens of output. Do not truncate or "
    "summarize - produce the full code."
)

# Neutral, non-repeating-looking prose; ~4 characters per token for common tokenizers.
_PADDING_SENTENCES = (
    "The river valley was settled by farmers who grew barley, lentils and flax on terraced fields.",
    "Each spring the snowmelt raised the water level and the mills along the banks worked longer.",
    "Merchants carried wool and salt along the old road, stopping at inns spaced a day apart.",
    "The town council kept records of every harvest, every bridge repair and every new well.",
    "In the archives one can still read the ledgers of the granary, written in a careful hand.",
    "Travellers described the market square, its fountain, and the clock that never kept time.",
    "A library was founded by a guild of weavers, and its reading room opened at dawn.",
    "The schoolmaster taught arithmetic with pebbles and geography with maps drawn on slate.",
)
CHARS_PER_TOKEN = 4


def nonce_line() -> str:
    """A unique first line so that no provider can serve the request from a prompt cache."""
    return f"Request id: {secrets.token_hex(8)}"


def padding(tokens: int) -> str:
    """About `tokens` tokens of neutral text, numbered so that no two paragraphs are equal."""
    if tokens <= 0:
        return ""
    target = tokens * CHARS_PER_TOKEN
    parts: list[str] = []
    size = 0
    index = 0
    while size < target:
        sentence = f"({index}) {_PADDING_SENTENCES[index % len(_PADDING_SENTENCES)]}"
        parts.append(sentence)
        size += len(sentence) + 1
        index += 1
    return " ".join(parts)


def build_prompt(*, prompt: str = STANDARD_PROMPT, context_tokens: int = 0) -> str:
    """Nonce line, then optional neutral context, then the benchmark task."""
    pieces = [nonce_line()]
    if context_tokens > 0:
        pieces.append("Background reading (not needed for the task):\n" + padding(context_tokens))
    pieces.append(prompt)
    return "\n\n".join(pieces)


def prompt_tokens_estimate(*, prompt: str = STANDARD_PROMPT, context_tokens: int = 0) -> int:
    """Tokens of one built prompt (nonce + padding + task) at ~4 characters per token.

    For cost estimates and for runs whose provider reported no input tokens.
    """
    text = build_prompt(prompt=prompt, context_tokens=context_tokens)
    return -(-len(text) // CHARS_PER_TOKEN)


MAX_SYSTEM_PROMPT_CHARS = 100_000
CONTEXT_HEADING = "Context:\n"


def context_excerpt(document: str, tokens: int, chars_per_token: float) -> str:
    """The document's first ~`tokens` tokens at `chars_per_token`, cut at a word boundary.

    A document shorter than that is sent whole (never repeated: repeated text is not real).
    """
    if tokens <= 0 or not document:
        return ""
    limit = int(tokens * chars_per_token)
    if len(document) <= limit:
        return document
    cut = document.rfind(" ", 0, limit + 1)
    return document[: cut if cut > limit // 2 else limit]


class ContextRuler:
    """Characters per input token, learnt from the provider's reported input tokens.

    The first requests are cut at CHARS_PER_TOKEN; once a provider reports input tokens for
    requests of known size, later ones are cut at its own ratio, so the context comes to the
    workload's size in that provider's tokens, not in an assumed tokenizer's.
    """

    def __init__(self) -> None:
        self.chars = 0
        self.tokens = 0

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else float(CHARS_PER_TOKEN)

    def learn(self, chars: int, input_tokens: int | None) -> None:
        if input_tokens and input_tokens > 0 and chars > 0:
            self.chars += chars
            self.tokens += input_tokens


@dataclass(frozen=True, slots=True)
class WorkloadText:
    """What a workload sends, read once from the database: its suite, system text, context
    and tools. Request i sends prompt i mod N (the rotation docs/workloads.md describes)."""

    prompts: tuple[str, ...]
    system: str = ""
    tools: tuple[Tool, ...] = ()
    context_document: str = ""
    context_tokens: int = 0

    @classmethod
    def of(cls, workload: Any, *, context_tokens: int | None = None) -> WorkloadText:
        suite = tuple(p for p in (workload.prompt_suite or ()) if isinstance(p, str) and p)
        return cls(
            prompts=suite or (workload.prompt,),
            system=workload.system_prompt,
            tools=tuple(tool_from_dict(raw) for raw in workload.tools or ()),
            context_document=workload.context_document,
            context_tokens=workload.context_tokens if context_tokens is None else context_tokens,
        )

    def prompt_index(self, sample_index: int) -> int:
        return sample_index % len(self.prompts)

    def build(self, sample_index: int, *, chars_per_token: float = CHARS_PER_TOKEN) -> Prompt:
        """Request `sample_index`'s prompt: nonce line, context, then the suite's prompt."""
        task = self.prompts[self.prompt_index(sample_index)]
        if not self.context_document:
            user = build_prompt(prompt=task, context_tokens=self.context_tokens)
        else:
            excerpt = context_excerpt(self.context_document, self.context_tokens, chars_per_token)
            pieces = [nonce_line(), CONTEXT_HEADING + excerpt if excerpt else "", task]
            user = "\n\n".join(piece for piece in pieces if piece)
        return Prompt(user=user, system=self.system, tools=self.tools)


def prompt_chars(prompt: Prompt) -> int:
    """Characters of a request's text (user, system, tool schemas): what ContextRuler divides."""
    tools = sum(
        len(json.dumps(tool.parameters)) + len(tool.name + tool.description)
        for tool in prompt.tools
    )
    return len(prompt.user) + len(prompt.system) + tools
