"""What a request carries besides its user text: the system prompt and the tool schemas.

Each protocol reads them from its API's own place and rejects tools in another API's shape,
as the real APIs do, so a test against the simulator shows that an adapter put them right.
A tool costs prefill: its canonical JSON (name, description, parameters) counts as input
characters, the same for every protocol, so input tokens compare across protocols.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .common import BadRequest


@dataclass(frozen=True, slots=True)
class Carried:
    system_chars: int = 0
    tool_names: tuple[str, ...] = ()
    tool_chars: int = 0


def astuple_carried(carried: Carried) -> tuple[int, tuple[str, ...], int]:
    """ParsedRequest's last three fields, in order."""
    return carried.system_chars, carried.tool_names, carried.tool_chars


def _schema_chars(name: str, description: Any, parameters: Any) -> int:
    canonical = {"name": name, "description": description or "", "parameters": parameters}
    return len(json.dumps(canonical, separators=(",", ":"), sort_keys=True))


def _tools(
    raw: Any, where: str, unpack: Callable[[Any, str], tuple[str, Any, Any]]
) -> tuple[tuple[str, ...], int]:
    """(names, characters) of a tools array whose items `unpack` reads (or rejects)."""
    if raw is None:
        return (), 0
    if not isinstance(raw, list):
        raise BadRequest(f"{where} must be an array")
    names: list[str] = []
    chars = 0
    for index, item in enumerate(raw):
        at = f"{where}[{index}]"
        if not isinstance(item, dict):
            raise BadRequest(f"{at} must be an object")
        name, description, parameters = unpack(item, at)
        if not isinstance(name, str) or not name:
            raise BadRequest(f"{at}: a tool needs a name")
        if not isinstance(parameters, dict):
            raise BadRequest(f"{at}: the tool's schema must be an object")
        names.append(name)
        chars += _schema_chars(name, description, parameters)
    return tuple(names), chars


def _openai_chat_tool(item: dict[str, Any], at: str) -> tuple[str, Any, Any]:
    function = item.get("function")
    if item.get("type") != "function" or not isinstance(function, dict):
        raise BadRequest(f"{at}: expected {{'type': 'function', 'function': {{...}}}}")
    return function.get("name"), function.get("description"), function.get("parameters", {})


def _responses_tool(item: dict[str, Any], at: str) -> tuple[str, Any, Any]:
    if item.get("type") != "function" or "function" in item:
        raise BadRequest(f"{at}: expected {{'type': 'function', 'name': ..., 'parameters': ...}}")
    return item.get("name"), item.get("description"), item.get("parameters", {})


def _anthropic_tool(item: dict[str, Any], at: str) -> tuple[str, Any, Any]:
    if "input_schema" not in item:
        raise BadRequest(f"{at}.input_schema: Field required")
    return item.get("name"), item.get("description"), item["input_schema"]


def _gemini_declaration(item: dict[str, Any], at: str) -> tuple[str, Any, Any]:
    return item.get("name"), item.get("description"), item.get("parameters", {})


def _bedrock_tool(item: dict[str, Any], at: str) -> tuple[str, Any, Any]:
    spec = item.get("toolSpec")
    schema = spec.get("inputSchema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict) or "json" not in schema:
        raise BadRequest(f"{at}: expected {{'toolSpec': {{'inputSchema': {{'json': ...}}}}}}")
    return spec.get("name"), spec.get("description"), schema["json"]


def openai_chat(body: dict[str, Any], system_chars: int) -> Carried:
    names, chars = _tools(body.get("tools"), "tools", _openai_chat_tool)
    return Carried(system_chars, names, chars)


def openai_responses(body: dict[str, Any], system_chars: int) -> Carried:
    names, chars = _tools(body.get("tools"), "tools", _responses_tool)
    return Carried(system_chars, names, chars)


def anthropic(body: dict[str, Any], system_chars: int) -> Carried:
    names, chars = _tools(body.get("tools"), "tools", _anthropic_tool)
    return Carried(system_chars, names, chars)


def gemini(body: dict[str, Any], system_chars: int) -> Carried:
    raw = body.get("tools")
    if raw is None:
        return Carried(system_chars)
    if not isinstance(raw, list):
        raise BadRequest("tools must be an array")
    names: tuple[str, ...] = ()
    chars = 0
    for index, group in enumerate(raw):
        if not isinstance(group, dict) or "functionDeclarations" not in group:
            raise BadRequest(f"tools[{index}]: expected {{'functionDeclarations': [...]}}")
        more, more_chars = _tools(
            group["functionDeclarations"],
            f"tools[{index}].functionDeclarations",
            _gemini_declaration,
        )
        names += more
        chars += more_chars
    return Carried(system_chars, names, chars)


def bedrock(body: dict[str, Any]) -> Carried:
    system = body.get("system")
    system_chars = 0
    if system is not None:
        if not isinstance(system, list):
            raise BadRequest("system must be a list of content blocks")
        system_chars = sum(len(b["text"]) for b in system if isinstance(b, dict) and "text" in b)
    config = body.get("toolConfig")
    if config is None:
        return Carried(system_chars)
    if not isinstance(config, dict):
        raise BadRequest("toolConfig must be an object")
    names, chars = _tools(config.get("tools"), "toolConfig.tools", _bedrock_tool)
    return Carried(system_chars, names, chars)
