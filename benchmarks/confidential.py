"""Who may read a workload's text (docs/workloads.md, "Confidential").

A custom workload's prompts, system prompt, context document and tool schemas are a team's
own: only a signed-in, active member with the `benchmarks.view_prompt_text` permission (give it
to a group, e.g. "prompt readers") reads them. Everyone else, and every log line, email, export
and public page, sees the workload's name and shape only.
"""

from __future__ import annotations

from typing import Any

PERMISSION = "benchmarks.view_prompt_text"
TEXT_FIELDS = ("prompt", "system_prompt", "prompt_suite", "context_document", "tools")


def can_read_prompt_text(user: Any) -> bool:
    if not (user is not None and user.is_authenticated and user.is_active):
        return False
    return user.has_perm(PERMISSION)


def shape(workload: Any) -> dict[str, Any]:
    """What anyone may know of a workload: sizes and counts, never text."""
    suite = workload.prompt_suite or [workload.prompt]
    return {
        "custom": workload.is_custom,
        "prompts": len(suite),
        "system_prompt_chars": len(workload.system_prompt),
        "context": "document" if workload.context_document else "neutral padding",
        "context_tokens": workload.context_tokens,
        "tools": len(workload.tools or ()),
        "reasoning_effort": workload.reasoning_effort,
        "max_output_tokens": workload.max_output_tokens,
    }
