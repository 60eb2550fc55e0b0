"""A custom workload's text taken out of what a provider says back (docs/workloads.md,
"Confidential").

A provider may quote the request in an error ("Invalid 'messages[0].content': You are the
support assistant of…"): stored as the sample's error message, that quote would put a team's
prompt on the public run page, in the API and in exports. Before a sample (or a run's failure
reason) is stored, every stretch of its message that repeats the workload's text — its system
prompt, prompts, context document, tool names, descriptions and schemas — becomes WITHHELD.

A stretch is found from SPAN characters up (whitespace collapsed on both sides, as stored
messages are): SPAN-character pieces of the text taken every STRIDE characters are looked up,
then each run of hits is widened character by character to the repeated stretch's ends. A whole text
shorter than SPAN (a tool's name) is replaced where it appears. The standard workloads' text
is public: nothing is withheld from their messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

WITHHELD = "[workload text withheld]"
SPAN = 24  # characters: shorter common runs ("the order") are not a quote
STRIDE = 8  # so any quoted stretch of SPAN + STRIDE - 1 characters or more is found
SHORTEST = 5  # a whole text shorter than this (a tool called "run") is left alone


def _flat(text: str) -> str:
    return " ".join(text.split())


class Withheld:
    """`withheld(message)`: the message with the workload's text taken out."""

    def __init__(self, texts: Iterable[str]) -> None:
        flat = {_flat(text) for text in texts}
        self._texts = [text for text in flat if len(text) >= SPAN]
        self._pieces = {
            text[i : i + SPAN]
            for text in self._texts
            for i in range(0, len(text) - SPAN + 1, STRIDE)
        }
        short = (text for text in flat if SHORTEST <= len(text) < SPAN)
        self._short = sorted(short, key=len, reverse=True)

    @classmethod
    def of(cls, workload: Any) -> Withheld:
        """What to withhold for `workload`: nothing for a standard workload."""
        if not workload.is_custom:
            return cls(())
        suite = [p for p in workload.prompt_suite or () if isinstance(p, str)]
        texts = [workload.prompt, workload.system_prompt, workload.context_document, *suite]
        for tool in workload.tools or ():
            texts.append(json.dumps(tool))
            if isinstance(tool, dict):
                texts += [str(value) for value in tool.values() if isinstance(value, str)]
                texts.append(json.dumps(tool.get("parameters", {})))
        return cls(texts)

    def _quoted(self, stretch: str) -> bool:
        return any(stretch in text for text in self._texts)

    def _spans(self, message: str) -> list[tuple[int, int]]:
        """The [start, end) stretches of `message` that repeat the workload's text."""
        spans: list[tuple[int, int]] = []
        for i in range(len(message) - SPAN + 1):
            if message[i : i + SPAN] not in self._pieces:
                continue
            if spans and i <= spans[-1][1]:
                spans[-1] = (spans[-1][0], i + SPAN)
            else:
                spans.append((i, i + SPAN))
        widened = []
        for start, end in spans:  # to the stretch's ends, between the pieces looked up
            while start > 0 and self._quoted(message[start - 1 : start - 1 + SPAN]):
                start -= 1
            while end < len(message) and self._quoted(message[end + 1 - SPAN : end + 1]):
                end += 1
            while message[start] == " ":  # the spaces around a quote stay
                start += 1
            while message[end - 1] == " ":
                end -= 1
            if widened and start <= widened[-1][1]:
                start = widened.pop()[0]
            widened.append((start, end))
        return widened

    def __call__(self, message: str) -> str:
        if not message or not (self._pieces or self._short):
            return message
        message = _flat(message)
        out, last = [], 0
        for start, end in self._spans(message):
            out += [message[last:start], WITHHELD]
            last = end
        out.append(message[last:])
        message = "".join(out)
        for text in self._short:
            message = message.replace(text, WITHHELD)
        return message
