"""AWS Bedrock ConverseStream (`POST /model/{modelId}/converse-stream`), one protocol for every
Bedrock model (docs/protocols.md §9).

The answer is AWS's binary event stream, decoded by eventstream.EventStreamDecoder (botocore's
parser); each frame arrives here as an SSEEvent named by its event or exception type. The body
is serialised here (`RequestSpec.content`) because a SigV4 signature covers its exact bytes;
the signature itself is added by the Credential (aws_auth.SigV4Credential) before the clock
starts. With a Bedrock API key the key is sent as a bearer token instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .anthropic_messages import thinking_option
from .base import (
    Delta,
    End,
    EndpointConfig,
    ErrorCategory,
    Finish,
    Item,
    ProviderLatency,
    RequestSpec,
    ServedLane,
    SSEEvent,
    StreamError,
    Usage,
)
from .errors import classify_status, clean_message, header, parse_retry_after
from .eventstream import BROKEN_FRAME, MEDIA_TYPE, EventStreamDecoder
from .lanes import bedrock_served, request_fields
from .prompt import Prompt, as_prompt, bedrock_tool_config
from .wire import as_dict, as_int, as_number, http_error, is_keepalive, join_url, load_object, merge

STOP_OUTCOMES = {
    "max_tokens": ErrorCategory.TRUNCATED,
    "model_context_window_exceeded": ErrorCategory.TRUNCATED,
    "guardrail_intervened": ErrorCategory.CONTENT_FILTERED,
    "content_filtered": ErrorCategory.CONTENT_FILTERED,
}


def bedrock_usage(usage: Mapping[str, Any]) -> Usage:
    """TokenUsage: inputTokens excludes cache reads/writes, which are counted apart."""
    parts = [
        as_int(usage.get(key))
        for key in ("inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
    ]
    return Usage(
        input_tokens=sum(p for p in parts if p is not None) if parts[0] is not None else None,
        output_tokens=as_int(usage.get("outputTokens")),
        cached_tokens=parts[1],
    )


def model_path(model: str) -> str:
    """The model id, inference profile id or ARN as one path segment (ARNs hold ':' and '/')."""
    return "/model/" + quote(model, safe="") + "/converse-stream"


class BedrockConverseAdapter:
    name = "bedrock_converse"
    ends_on_close = False  # `metadata` is the last frame of every ConverseStream answer
    media_type = MEDIA_TYPE
    new_decoder = EventStreamDecoder

    def build_request(
        self, config: EndpointConfig, *, prompt: str | Prompt, max_tokens: int
    ) -> RequestSpec:
        parts = as_prompt(prompt)
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": [{"text": parts.user}]}],
            "inferenceConfig": {config.max_tokens_field or "maxTokens": max_tokens},
        }
        if parts.system:
            body["system"] = [{"text": parts.system}]
        if parts.tools:
            body["toolConfig"] = bedrock_tool_config(parts.tools)
        body.update(request_fields(config.protocol, config.lane))
        if config.reasoning_effort and "anthropic." in config.model:
            thinking = thinking_option(config.reasoning_effort, max_tokens)
            if thinking:
                body["additionalModelRequestFields"] = {"thinking": thinking}
        elif config.reasoning_effort:
            # Nova 2, gpt-oss and others take a reasoning config in the model's own fields.
            body["additionalModelRequestFields"] = {
                "reasoningConfig": {
                    "type": "enabled",
                    "maxReasoningEffort": config.reasoning_effort,
                }
            }
        body = merge(body, config.extra_body)
        headers = {"content-type": "application/json", "accept": MEDIA_TYPE}
        if config.api_key:
            headers["authorization"] = f"Bearer {config.api_key}"  # a Bedrock API key
        headers.update(config.extra_headers)
        return RequestSpec(
            method="POST",
            url=join_url(config.base_url, model_path(config.model)),
            headers=headers,
            json=body,
            content=json.dumps(body, separators=(",", ":")).encode(),
        )

    def parse(self, event: SSEEvent) -> list[Item]:
        kind = event.event
        if kind == BROKEN_FRAME:
            return [
                StreamError(ErrorCategory.STREAM_BROKEN, f"broken event-stream frame: {event.data}")
            ]
        if is_keepalive(event.data):
            return []  # a frame with an empty payload carries nothing
        obj = load_object(event.data)
        if isinstance(obj, StreamError):
            return [obj]
        if kind == "contentBlockDelta":
            delta = as_dict(obj.get("delta"))
            text = delta.get("text")
            if isinstance(text, str):
                return [Delta(text)] if text else []
            reasoning = as_dict(delta.get("reasoningContent")).get("text")
            if isinstance(reasoning, str) and reasoning:
                return [Delta(reasoning, reasoning=True)]
            return []  # signature, redactedContent, toolUse input
        if kind == "messageStop":
            reason = obj.get("stopReason")
            if isinstance(reason, str) and reason:
                return [Finish(reason, STOP_OUTCOMES.get(reason, ""))]
            return []
        if kind == "metadata":
            items: list[Item] = []
            if isinstance(obj.get("usage"), dict):
                items.append(bedrock_usage(obj["usage"]))
            latency = as_number(as_dict(obj.get("metrics")).get("latencyMs"))
            if latency is not None:
                items.append(ProviderLatency(latency))
            lane = bedrock_served(obj)  # performanceConfig / serviceTier actually used
            if lane:
                items.append(ServedLane(lane))
            return [*items, End()]
        if kind.endswith("Exception") or kind == "error":
            return [exception_item(kind, obj)]
        return []  # messageStart, contentBlockStart, contentBlockStop

    def classify_http_error(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> StreamError:
        """Bedrock names the error in `x-amzn-ErrorType` ("ThrottlingException:http://...")."""
        error_type = (header(headers, "x-amzn-errortype") or "").split(":", 1)[0]
        if not error_type:
            return http_error(status, headers, body)
        obj = load_object(body.decode("utf-8", "replace"))
        message = obj.get("message") or obj.get("Message") if isinstance(obj, dict) else ""
        text = message if isinstance(message, str) else ""
        error = exception_item(error_type, {"message": text}, status=status)
        return StreamError(
            error.category,
            clean_message(f"HTTP {status} {error.message}"),
            retry_after_s=parse_retry_after(headers),
            http_status=status,
        )


def exception_item(name: str, obj: Mapping[str, Any], *, status: int | None = None) -> StreamError:
    """An exception frame or error type: throttlingException -> rate_limited, and so on."""
    message = obj.get("message") or obj.get("originalMessage") or ""
    code = obj.get("code") if name == "error" else name
    category = classify_status(status, None, str(code or ""), str(message))
    return StreamError(category, clean_message(f"{code}: {message}" if message else str(code)))


adapter = BedrockConverseAdapter()
