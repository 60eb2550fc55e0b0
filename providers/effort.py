"""Reasoning effort: the values an adapter can send, and which APIs take each (docs/workloads.md).

OpenAI's Chat Completions (`reasoning_effort`) and Responses (`reasoning.effort`) and Bedrock's
non-Anthropic models (`maxReasoningEffort`) send the value as it is; Anthropic, and Claude on
Bedrock and Vertex, turn it into a `thinking` object (anthropic_messages.thinking_option);
Gemini and Vertex Gemini into a `thinkingConfig` (gemini.thinking_config). A value no adapter
can send is refused where it is written (a workload's model, form, API and import), not found
out when every request of a run fails. Pure data: no clock, no I/O.
"""

from __future__ import annotations

import re

# Levels every adapter maps: OpenAI sends them, Anthropic turns them into a thinking budget
# inside the output cap, Gemini 3 into a thinkingLevel.
LEVELS = ("minimal", "low", "medium", "high")
# Each word an adapter can send, and the APIs that take it.
WORDS = {
    "none": "every API (thinking off)",
    **dict.fromkeys(LEVELS, "every API"),
    "xhigh": "OpenAI",
    "max": "OpenAI",
    "adaptive": "Anthropic",
    "auto": "Gemini (dynamic thinking)",
    "dynamic": "Gemini (= auto)",
    "off": "Anthropic, Gemini (= none)",
    "disabled": "Anthropic (= none)",
}
# A thinking budget in tokens (Anthropic's budget_tokens, Gemini's thinkingBudget; -1: Gemini's
# automatic budget).
BUDGET = re.compile(r"-1|0|[1-9][0-9]{0,6}")


def effort_problem(value: str) -> str:
    """Why no adapter can send `value` as a reasoning effort; "" when one can (or it is blank:
    the endpoint's own effort)."""
    if not value or value in WORDS or BUDGET.fullmatch(value):
        return ""
    words = ", ".join(f"{word} ({apis})" for word, apis in WORDS.items())
    return (
        f"{value!r} is not a reasoning effort any API takes. Use one of: {words}; or a thinking "
        "budget in tokens (Anthropic, Gemini; -1 for Gemini's automatic budget)."
    )
