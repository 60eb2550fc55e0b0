"""OpenAI Responses API (docs/protocols.md §3): typed events, usage in the terminal event."""

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
from .prompt import Prompt, as_prompt, openai_responses_tools
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

TEXT_EVENTS = {"response.output_text.delta", "response.refusal.delta"}
REASONING_EVENTS = {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
# output_tokens counts the whole reasoning; a summary of it is all that streams.
_SUMMARIZED = ReasoningShown(ReasoningMode.SUMMARIZED)
INCOMPLETE_OUTCOMES = {
    "max_output_tokens": ErrorCategory.TRUNCATED,
    "content_filter": ErrorCategory.CONTENT_FILTERED,
}


def responses_usage(usage: Mapping[str, Any]) -> Usage:
    input_details = as_dict(usage.get("input_tokens_details"))
    output_details = as_dict(usage.get("output_tokens_details"))
    return Usage(
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
        reasoning_tokens=as_int(output_details.get("reasoning_tokens")),
        cached_tokens=as_int(input_details.get("cached_tokens")),
    )


class OpenAIResponsesAdapter:
    name = "openai_responses"
    ends_on_close = False

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        parts = as_prompt(prompt)
        body: dict[str, Any] = {
            "model": config.model,
            "input": parts.user,
            "stream": True,
            config.max_tokens_field or "max_output_tokens": max_tokens,
        }
        if config.reasoning_effort:
            # Without a summary request the API streams no reasoning text at all.
            body["reasoning"] = {"effort": config.reasoning_effort, "summary": "auto"}
        if parts.system:
            body["instructions"] = parts.system
        if parts.tools:
            body["tools"] = openai_responses_tools(parts.tools)
        body.update(request_fields(config.protocol, config.lane))
        auth = {"authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        return RequestSpec(
            method="POST",
            url=endpoint_url(config.base_url, "/responses", version="v1", bare_host_only=True),
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
        if kind in TEXT_EVENTS or kind in REASONING_EVENTS:
            text = obj.get("delta")
            if not isinstance(text, str) or not text:
                return []
            if kind == "response.reasoning_summary_text.delta":
                return [Delta(text, reasoning=True), _SUMMARIZED]
            if kind == "response.refusal.delta":
                return [Delta(text, refusal=True)]
            return [Delta(text, reasoning=kind in REASONING_EVENTS)]
        if kind == "error":
            return [error_item(obj)]
        if kind not in {"response.completed", "response.incomplete", "response.failed"}:
            return []  # created, in_progress, item/part bookkeeping, .done events
        response = as_dict(obj.get("response"))
        items: list[Item] = []
        if isinstance(response.get("usage"), dict):
            items.append(responses_usage(response["usage"]))
        if served(response.get("service_tier")):
            items.append(ServedLane(served(response["service_tier"])))
        if kind == "response.completed":
            items += [Finish("completed"), End()]
        elif kind == "response.incomplete":
            reason = as_dict(response.get("incomplete_details")).get("reason")
            reason = reason if isinstance(reason, str) and reason else "incomplete"
            items += [
                Finish(reason, INCOMPLETE_OUTCOMES.get(reason, ErrorCategory.TRUNCATED)),
                End(),
            ]
        else:
            failure = response.get("error")
            items.append(error_item({"error": failure if isinstance(failure, dict) else {}}))
        return items

    # Every protocol's error bodies are told apart by wire.error_fields, so one classifier serves.
    classify_http_error = staticmethod(http_error)


adapter = OpenAIResponsesAdapter()
