"""Reasoning written inline as `<think>…</think>` at the start of the answer text.

DeepSeek-R1 distills served without a reasoning parser (vLLM, Groq's raw format, Together,
Fireworks, Ollama) stream their reasoning inside `content`. The text inside the tags is
reasoning; the answer starts after `</think>`. Tags may be split across chunks, so the splitter
holds back only the few characters that could still be the start of a tag. Only an answer that
*starts* with `<think>` (after whitespace) is split: a tag later in an answer is just text.
"""

from __future__ import annotations

OPEN = "<think>"
CLOSE = "</think>"


class ThinkSplitter:
    """Feed answer text chunk by chunk; get back (reasoning, answer) text for each."""

    __slots__ = ("_state", "_held")

    def __init__(self) -> None:
        self._state = "start"  # start → inside → closed → after (answer), or start → plain
        self._held = ""  # text that may be a partial tag

    @property
    def undecided(self) -> bool:
        """True while the answer could still start with <think> (only whitespace or a partial
        tag so far)."""
        return self._state == "start"

    @property
    def passthrough(self) -> bool:
        """True once the answer is known not to start with <think>: feed() is then identity."""
        return self._state == "plain"

    def feed(self, text: str) -> tuple[str, str]:
        """(reasoning text, answer text) carried by this chunk; either may be empty."""
        state = self._state
        if state == "plain" or state == "after":
            return "", text
        if state == "closed":  # whitespace between </think> and the answer is not answer text
            text = text.lstrip()
            if text:
                self._state = "after"
            return "", text
        text = self._held + text
        self._held = ""
        if state == "start":
            stripped = text.lstrip()
            if stripped.startswith(OPEN):
                text = stripped[len(OPEN) :]
                state = self._state = "inside"
            elif OPEN.startswith(stripped):
                self._held = text  # whitespace or a partial "<think": wait for more
                return "", ""
            else:
                self._state = "plain"
                return "", text
        at = text.find(CLOSE)
        if at >= 0:
            answer = text[at + len(CLOSE) :].lstrip()
            self._state = "after" if answer else "closed"
            return text[:at], answer
        keep = _partial_suffix(text, CLOSE)
        if keep:
            self._held = text[-keep:]
            text = text[:-keep]
        return text, ""

    def close(self) -> tuple[str, str]:
        """End of stream: text held back as a possible tag is what it is."""
        held, self._held = self._held, ""
        if self._state == "inside":
            return held, ""
        return "", held


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0
