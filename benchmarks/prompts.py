"""The standard prompt (docs/design.md §3), its nonce line and neutral context padding."""

import secrets

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
