"""OpenAI Chat Completions and every OpenAI-compatible server (docs/protocols.md §2, §6)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .base import (
    Delta,
    End,
    EndpointConfig,
    ErrorCategory,
    Finish,
    Item,
    RequestSpec,
    ServedLane,
    SSEEvent,
    StreamError,
    Usage,
)
from .errors import clean_message
from .lanes import request_fields, served
from .prompt import Prompt, as_prompt, openai_chat_tools
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

# OpenAI reasoning models reject `max_tokens` (o-series, gpt-5 family), also behind a router
# prefix such as OpenRouter's "openai/".
_REASONING_MODEL = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)

FINISH_OUTCOMES = {
    "length": ErrorCategory.TRUNCATED,
    "model_length": ErrorCategory.TRUNCATED,
    "max_tokens": ErrorCategory.TRUNCATED,
    "content_filter": ErrorCategory.CONTENT_FILTERED,
    "error": ErrorCategory.SERVER_ERROR,
    "abort": ErrorCategory.STREAM_BROKEN,
}
# Providers name the reasoning text differently: vLLM/Ollama/OpenRouter/Groq/Cerebras
# `reasoning`, DeepSeek/SGLang/llama.cpp/older vLLM `reasoning_content`, a few `reasoning_text`.
# vLLM's transition releases send the same text under two names: take the first only.
REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_text")


def content_parts(parts: list[Any]) -> list[Item]:
    """`delta.content` sent as typed parts (Mistral's reasoning models): `{"type": "thinking",
    "thinking": [{"type": "text", "text": ...}]}` is reasoning, `{"type": "text"}` the answer."""
    items: list[Item] = []
    for part in parts:
        if isinstance(part, str):
            if part:
                items.append(Delta(part))
            continue
        part = as_dict(part)
        kind = part.get("type")
        if kind == "thinking":
            inner = part.get("thinking")
            texts = inner if isinstance(inner, list) else [{"text": inner}]
            for piece in texts:
                text = piece if isinstance(piece, str) else as_dict(piece).get("text")
                if isinstance(text, str) and text:
                    items.append(Delta(text, reasoning=True))
        elif kind in (None, "text"):
            text = part.get("text")
            if isinstance(text, str) and text:
                items.append(Delta(text))
    return items


def chat_usage(usage: Mapping[str, Any]) -> Usage:
    """CompletionUsage, incl. DeepSeek's prompt_cache_hit_tokens."""
    prompt_details = as_dict(usage.get("prompt_tokens_details"))
    completion_details = as_dict(usage.get("completion_tokens_details"))
    cached = as_int(prompt_details.get("cached_tokens"))
    if cached is None:
        cached = as_int(usage.get("prompt_cache_hit_tokens"))
    return Usage(
        input_tokens=as_int(usage.get("prompt_tokens")),
        output_tokens=as_int(usage.get("completion_tokens")),
        reasoning_tokens=as_int(completion_details.get("reasoning_tokens")),
        cached_tokens=cached,
    )


def llamacpp_usage(timings: Mapping[str, Any]) -> Usage:
    """llama.cpp's own counts when no usage was sent: prompt_n excludes the cached cache_n."""
    prompt, cached = as_int(timings.get("prompt_n")), as_int(timings.get("cache_n"))
    return Usage(
        input_tokens=None if prompt is None else prompt + (cached or 0),
        output_tokens=as_int(timings.get("predicted_n")),
        cached_tokens=cached,
    )


def _flagged(choice: Mapping[str, Any]) -> bool:
    results = as_dict(choice.get("content_filter_results"))
    return any(as_dict(verdict).get("filtered") is True for verdict in results.values())


class OpenAIChatAdapter:
    name = "openai_chat"
    ends_on_close = False
    # `reasoning_content` / `reasoning` text is the reasoning itself, never a summary: a summary
    # (OpenRouter's of OpenAI's models) comes with a reasoning_tokens count that says so.
    reasoning_in_full = True

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        field = config.max_tokens_field or (
            "max_completion_tokens" if _REASONING_MODEL.match(config.model) else "max_tokens"
        )
        parts = as_prompt(prompt)
        messages = [{"role": "system", "content": parts.system}] if parts.system else []
        messages.append({"role": "user", "content": parts.user})
        body: dict[str, Any] = {
            "model": config.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            field: max_tokens,
        }
        if config.reasoning_effort:
            body["reasoning_effort"] = config.reasoning_effort
        if parts.tools:
            body["tools"] = openai_chat_tools(parts.tools)
        body.update(request_fields(config.protocol, config.lane))
        auth = {"authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        return RequestSpec(
            method="POST",
            url=endpoint_url(
                config.base_url, "/chat/completions", version="v1", bare_host_only=True
            ),
            headers=headers_for(config, auth),
            json=merge(body, config.extra_body),
        )

    def parse(self, event: SSEEvent) -> list[Item]:
        data = event.data
        if is_keepalive(data):
            return []
        if data.strip() == "[DONE]":
            return [End()]
        obj = load_object(data)
        if isinstance(obj, StreamError):
            return [obj]
        items: list[Item] = []
        finish: Finish | None = None
        for choice in obj.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # n=1: other choices would double-count
            delta = choice.get("delta")
            if isinstance(delta, dict):
                for key in REASONING_KEYS:
                    reasoning = delta.get(key)
                    if isinstance(reasoning, str) and reasoning:
                        items.append(Delta(reasoning, reasoning=True))
                        break
                content = delta.get("content")
                refusal = delta.get("refusal")
                if isinstance(refusal, str) and refusal:
                    items.append(Delta(refusal, refusal=True))
            else:
                content = choice.get("text")  # legacy completions-style chunk
            if isinstance(content, str):
                if content:
                    items.append(Delta(content))
            elif isinstance(content, list):
                items += content_parts(content)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                finish = Finish(reason, FINISH_OUTCOMES.get(reason, ""))
            elif "content_filter_offsets" in choice and _flagged(choice):
                # Azure's asynchronous filter: a verdict that flags text already sent, possibly
                # after the stop, ends the answer as filtered.
                finish = Finish("content_filter", ErrorCategory.CONTENT_FILTERED)
        # Usage may sit on its own choices:[] chunk, on the last content chunk, on every chunk
        # (vLLM continuous stats), under x_groq, or beside an error (OpenRouter): look
        # everywhere, later values win.
        usage = obj.get("usage")
        groq = as_dict(obj.get("x_groq"))
        if not isinstance(usage, dict):
            usage = groq.get("usage")
        if isinstance(usage, dict):
            items.append(chat_usage(usage))
            lane = served(obj.get("service_tier"))  # on every chunk: read once, at the usage
            if lane:
                items.append(ServedLane(lane))
        elif "predicted_n" in as_dict(obj.get("timings")):
            items.append(llamacpp_usage(obj["timings"]))
        # The error after the usage and finish of the same chunk: what it counted is kept, and
        # its category, not the finish reason's, is the sample's (docs/providers/).
        if obj.get("error") or obj.get("object") == "error":
            if finish and finish.outcome not in ErrorCategory.ERRORS:
                items.append(finish)
            items.append(error_item(obj))
            return items
        if finish:
            items.append(finish)
        if isinstance(groq.get("error"), str) and groq["error"]:
            message = clean_message(f"x_groq error: {groq['error']}")
            items.append(StreamError(ErrorCategory.STREAM_BROKEN, message))
        return items

    # Every protocol's error bodies are told apart by wire.error_fields, so one classifier serves.
    classify_http_error = staticmethod(http_error)


adapter = OpenAIChatAdapter()
