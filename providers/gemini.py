"""Google Gemini `streamGenerateContent?alt=sse` (docs/protocols.md §5).

No end marker: the server closes the connection after the chunk carrying `finishReason`, so
`ends_on_close` is True. Thought parts are reasoning text; generated tokens are
candidatesTokenCount + thoughtsTokenCount (candidates exclude thoughts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .base import (
    Delta,
    EndpointConfig,
    ErrorCategory,
    Finish,
    Item,
    RequestSpec,
    SSEEvent,
    StreamError,
    Usage,
)
from .lanes import request_fields
from .prompt import Prompt, as_prompt, gemini_tools
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

# finishReason values (google.genai types.FinishReason). STOP is the clean end.
FILTERED = {
    "SAFETY",
    "RECITATION",
    "PROHIBITED_CONTENT",
    "BLOCKLIST",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "LANGUAGE",  # the request's language is not supported: no answer is given
}
TRUNCATED = {"MAX_TOKENS"}
# The generation failed (a malformed or unexpected tool call, "OTHER", an unknown reason): the
# sample is an error, timings kept, out of speed statistics.
CLEAN = {"STOP", "FINISH_REASON_UNSPECIFIED"}
LEVELS = {"minimal", "low", "medium", "high"}


def thinking_config(effort: str) -> dict[str, Any] | None:
    """generationConfig.thinkingConfig for an Endpoint.reasoning_effort value.

    "none"/"off" -> thinkingBudget 0; a number (or -1 for automatic) -> thinkingBudget;
    minimal/low/medium/high -> thinkingLevel (Gemini 3). Thoughts are requested whenever
    thinking is on, so reasoning text is streamed and times the first token.
    """
    effort = effort.strip().lower()
    if not effort:
        return None
    if effort in {"none", "off", "0"}:
        return {"thinkingBudget": 0}
    if effort in {"auto", "dynamic"}:
        return {"thinkingBudget": -1, "includeThoughts": True}
    if effort.lstrip("-").isdigit():
        return {"thinkingBudget": int(effort), "includeThoughts": True}
    if effort in LEVELS:
        return {"thinkingLevel": effort.upper(), "includeThoughts": True}
    raise ValueError(
        f"reasoning_effort {effort!r} is not understood for Gemini: use none, auto, a thinking "
        "budget in tokens, or minimal/low/medium/high"
    )


def finish_outcome(reason: str) -> str:
    if reason in CLEAN:
        return ""
    if reason in TRUNCATED:
        return ErrorCategory.TRUNCATED
    if reason in FILTERED:
        return ErrorCategory.CONTENT_FILTERED
    return ErrorCategory.SERVER_ERROR


def gemini_usage(meta: Mapping[str, Any]) -> Usage:
    candidates = as_int(meta.get("candidatesTokenCount"))
    thoughts = as_int(meta.get("thoughtsTokenCount"))
    output = (
        None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    )
    return Usage(
        input_tokens=as_int(meta.get("promptTokenCount")),
        output_tokens=output,
        reasoning_tokens=thoughts,
        cached_tokens=as_int(meta.get("cachedContentTokenCount")),
    )


class GeminiAdapter:
    name = "gemini"
    ends_on_close = True

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        generation: dict[str, Any] = {config.max_tokens_field or "maxOutputTokens": max_tokens}
        thinking = thinking_config(config.reasoning_effort)
        if thinking:
            generation["thinkingConfig"] = thinking
        parts = as_prompt(prompt)
        body: dict[str, Any] = {
            "contents": [{"role": "user", "parts": [{"text": parts.user}]}],
            "generationConfig": generation,
        }
        if parts.system:
            body["systemInstruction"] = {"parts": [{"text": parts.system}]}
        if parts.tools:
            body["tools"] = gemini_tools(parts.tools)
        # No lane field (providers.lanes): any lane but standard is refused, never ignored.
        body.update(request_fields(config.protocol, config.lane))
        model = config.model.removeprefix("models/")
        path = f"/models/{quote(model, safe='+=@-._~')}:streamGenerateContent?alt=sse"
        # The key goes in a header, never in the URL (URLs end up in logs and error messages).
        auth = {"x-goog-api-key": config.api_key} if config.api_key else {}
        return RequestSpec(
            method="POST",
            url=endpoint_url(config.base_url, path, version="v1beta"),
            headers=headers_for(config, auth),
            json=merge(body, config.extra_body),
        )

    def parse(self, event: SSEEvent) -> list[Item]:
        if is_keepalive(event.data):
            return []
        obj = load_object(event.data)
        if isinstance(obj, StreamError):
            return [obj]
        if obj.get("error"):
            return [error_item(obj)]
        items: list[Item] = []
        finish: Finish | None = None
        candidates = obj.get("candidates")
        candidate = as_dict(candidates[0]) if isinstance(candidates, list) and candidates else {}
        for part in as_dict(candidate.get("content")).get("parts") or ():
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and text:
                items.append(Delta(text, reasoning=part.get("thought") is True))
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            finish = Finish(reason, finish_outcome(reason))
        block = as_dict(obj.get("promptFeedback")).get("blockReason")
        if not candidates and isinstance(block, str) and block:
            finish = Finish(block, ErrorCategory.CONTENT_FILTERED)  # prompt refused: no candidates
        if isinstance(obj.get("usageMetadata"), dict):
            items.append(gemini_usage(obj["usageMetadata"]))
        if finish:
            items.append(finish)
        return items

    # Every protocol's error bodies are told apart by wire.error_fields, so one classifier serves.
    classify_http_error = staticmethod(http_error)


adapter = GeminiAdapter()
