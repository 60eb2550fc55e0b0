"""What one request says: the user text, a system prompt and tool schemas, in each API's place.

A workload (benchmarks.prompts) builds a `Prompt`; each adapter puts its parts where its API
expects them (docs/workloads.md): the system prompt as a `system` message (OpenAI Chat),
`instructions` (Responses), `system` (Anthropic, Bedrock) or `systemInstruction` (Gemini); the
tools in each API's own shape. A plain string is a prompt with no system text and no tools.
Pure data and pure functions: no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Tool:
    """One function tool: a name, what it does, and its parameters as a JSON Schema object."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True, slots=True)
class Prompt:
    user: str
    system: str = ""
    tools: tuple[Tool, ...] = ()


def as_prompt(prompt: str | Prompt) -> Prompt:
    return prompt if isinstance(prompt, Prompt) else Prompt(user=prompt)


def tool_from_dict(raw: Any) -> Tool:
    """A Tool from the neutral JSON shape {"name", "description", "parameters"}; also accepts
    OpenAI's {"type": "function", "function": {...}} and Anthropic's `input_schema`.

    ValueError with a readable reason for anything else.
    """
    if not isinstance(raw, dict):
        raise ValueError("a tool must be an object with a name")
    if isinstance(raw.get("function"), dict):
        raw = raw["function"]
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a tool needs a non-empty string name")
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise ValueError(f"tool {name!r}: description must be a string")
    parameters = raw.get("parameters", raw.get("input_schema", {"type": "object"}))
    if not isinstance(parameters, dict):
        raise ValueError(f"tool {name!r}: parameters must be a JSON Schema object")
    return Tool(name=name.strip(), description=description, parameters=parameters)


# --- each API's shape -------------------------------------------------------------------------


def openai_chat_tools(tools: tuple[Tool, ...]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def openai_responses_tools(tools: tuple[Tool, ...]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters,
        }
        for t in tools
    ]


def anthropic_tools(tools: tuple[Tool, ...]) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]


def gemini_tools(tools: tuple[Tool, ...]) -> list[dict[str, Any]]:
    declarations = [
        {"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools
    ]
    return [{"functionDeclarations": declarations}]


def bedrock_tool_config(tools: tuple[Tool, ...]) -> dict[str, Any]:
    return {
        "tools": [
            {
                "toolSpec": {
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": {"json": t.parameters},
                }
            }
            for t in tools
        ]
    }
