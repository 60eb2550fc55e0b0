"""Anthropic Messages (docs/protocols.md §4): typed events, final usage in message_delta."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import (
    Delta,
    End,
    EndpointConfig,
    ErrorCategory,
    Finish,
    Item,
    ReasoningMode,
    ReasoningShown,
    RequestSpec,
    ServedLane,
    SSEEvent,
    StreamError,
    Usage,
)
from .lanes import request_fields, served
from .prompt import Prompt, anthropic_tools, as_prompt
from .wire import (
    as_dict,
    as_int,
    endpoint_url,
    headers_for,
    http_error,
    is_keepalive,
    load_object,
    merge,
)
from .wire import stream_error as error_item

API_VERSION = "2023-06-01"
MIN_THINKING_BUDGET = 1024  # the API's lower bound for budget_tokens
# Share of max_tokens given to thinking per effort level (the rest is left for the answer).
EFFORT_SHARE = {"minimal": 0.0, "low": 0.25, "medium": 0.5, "high": 0.75}
STOP_OUTCOMES = {
    "max_tokens": ErrorCategory.TRUNCATED,
    "model_context_window_exceeded": ErrorCategory.TRUNCATED,
    # A long server-tool turn paused before its answer was complete: cut short, like max_tokens.
    "pause_turn": ErrorCategory.TRUNCATED,
    "refusal": ErrorCategory.REFUSED,
}
# A redacted_thinking block: the thinking is counted in output_tokens but arrives encrypted.
_HIDDEN = ReasoningShown(ReasoningMode.HIDDEN)
# A thinking block opens: its text should stream; when none does (thinking display omitted),
# the measurement records the reasoning as hidden.
_THINKING = ReasoningShown(ReasoningMode.STREAMED)


def thinking_option(effort: str, max_tokens: int) -> dict[str, Any] | None:
    """The `thinking` request object for an Endpoint.reasoning_effort value.

    "adaptive" (Claude 4.6+), "none"/"off"/"disabled", a budget in tokens ("2048"), or a level
    (minimal/low/medium/high) turned into a budget that fits inside max_tokens.
    """
    effort = effort.strip().lower()
    if effort in {"", "none", "off", "disabled"}:
        return None
    if effort == "adaptive":
        return {"type": "adaptive"}
    if effort.isdigit():
        budget = int(effort)
    elif effort in EFFORT_SHARE:
        budget = max(MIN_THINKING_BUDGET, int(max_tokens * EFFORT_SHARE[effort]))
    else:
        raise ValueError(
            f"reasoning_effort {effort!r} is not understood for Anthropic: use adaptive, none, "
            "minimal, low, medium, high or a thinking budget in tokens"
        )
    budget = min(budget, max_tokens - 1)
    if budget < MIN_THINKING_BUDGET:
        raise ValueError(
            f"extended thinking needs a budget of at least {MIN_THINKING_BUDGET} tokens below "
            f"max_tokens; raise max tokens above {MIN_THINKING_BUDGET} (now {max_tokens})"
        )
    return {"type": "enabled", "budget_tokens": budget}


def message_usage(usage: Mapping[str, Any]) -> Usage:
    """input_tokens counts all prompt tokens (Anthropic lists cache reads/writes separately)."""
    parts = [
        as_int(usage.get(key))
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    ]
    known = [p for p in parts if p is not None]
    details = as_dict(usage.get("output_tokens_details"))
    return Usage(
        input_tokens=sum(known) if parts[0] is not None else None,
        output_tokens=as_int(usage.get("output_tokens")),
        reasoning_tokens=as_int(details.get("thinking_tokens")),
        cached_tokens=parts[2],
    )


class AnthropicMessagesAdapter:
    name = "anthropic_messages"
    ends_on_close = False

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        parts = as_prompt(prompt)
        body: dict[str, Any] = {
            "model": config.model,
            "messages": [{"role": "user", "content": parts.user}],
            "stream": True,
            config.max_tokens_field or "max_tokens": max_tokens,
        }
        thinking = thinking_option(config.reasoning_effort, max_tokens)
        if thinking:
            body["thinking"] = thinking
        if parts.system:
            body["system"] = parts.system
        if parts.tools:
            body["tools"] = anthropic_tools(parts.tools)
        body.update(request_fields(config.protocol, config.lane))
        auth = {"anthropic-version": API_VERSION}
        if config.api_key:
            auth["x-api-key"] = config.api_key
        return RequestSpec(
            method="POST",
            url=endpoint_url(config.base_url, "/messages", version="v1"),
            headers=headers_for(config, auth),
            json=merge(body, config.extra_body),
        )

    def parse(self, event: SSEEvent) -> list[Item]:
        if is_keepalive(event.data):
            return []
        obj = load_object(event.data)
        if isinstance(obj, StreamError):
            return [obj]
        kind = obj.get("type") if isinstance(obj.get("type"), str) else event.event
        if kind == "content_block_delta":
            delta = as_dict(obj.get("delta"))
            if delta.get("type") == "text_delta":
                text, reasoning = delta.get("text"), False
            elif delta.get("type") == "thinking_delta":
                text, reasoning = delta.get("thinking"), True
            else:
                return []  # signature, tool input json, citations
            return [Delta(text, reasoning=reasoning)] if isinstance(text, str) and text else []
        if kind == "message_start":
            message = as_dict(obj.get("message"))
            usage = message.get("usage")
            if not isinstance(usage, dict):
                return []
            # output_tokens here is a placeholder (1-5): keep only the prompt side.
            first = message_usage(usage)
            start: list[Item] = [
                Usage(input_tokens=first.input_tokens, cached_tokens=first.cached_tokens)
            ]
            if served(usage.get("service_tier")):
                start.append(ServedLane(served(usage["service_tier"])))
            return start
        if kind == "message_delta":
            items: list[Item] = []
            if isinstance(obj.get("usage"), dict):
                items.append(message_usage(obj["usage"]))  # cumulative: the last one wins
            reason = as_dict(obj.get("delta")).get("stop_reason")
            if isinstance(reason, str) and reason:
                items.append(Finish(reason, STOP_OUTCOMES.get(reason, "")))
            return items
        if kind == "content_block_start":
            block = as_dict(obj.get("content_block"))
            if block.get("type") == "redacted_thinking":
                return [_HIDDEN]
            return [_THINKING] if block.get("type") == "thinking" else []
        if kind == "message_stop":
            return [End()]
        if kind == "error":
            return [error_item(obj)]
        return []  # ping, content_block_stop

    # Every protocol's error bodies are told apart by wire.error_fields, so one classifier serves.
    classify_http_error = staticmethod(http_error)


adapter = AnthropicMessagesAdapter()
