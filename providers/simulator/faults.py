"""The faults a request can ask for (`+fault=NAME` in the model name or header `x-sim-fault`).

Each protocol module renders them in its own wire shape; this module only names them and says
when they strike.
"""

FAULTS: dict[str, str] = {
    "429": "HTTP 429 rate limit with a retry-after header",
    "500": "HTTP 500 server error",
    "529": "overloaded: Anthropic's 529 overloaded_error, 503 with the overloaded body elsewhere",
    "401": "wrong API key (Gemini answers 400 API_KEY_INVALID, as the real API does)",
    "not_sse": "HTTP 200 with a text/html body instead of an event stream",
    "error_event": "HTTP 200, half the tokens, then the protocol's mid-stream error event",
    "drop": "HTTP 200, half the tokens, then the TCP connection is closed mid-body",
    "stall": "HTTP 200, half the tokens, then silence for stall_s seconds (default 300)",
    "malformed": "HTTP 200, half the tokens, then one data event with broken JSON",
    "comments": "keep-alive comments and CRLF framing mixed into an otherwise valid stream",
    "no_usage": "a valid stream that reports no token usage",
    "content_filter": "Chat and Azure OpenAI: half the tokens, then a content-filter stop "
    "(finish_reason content_filter; on Azure with the filter results that flagged it)",
    "async_filter": "Azure OpenAI's asynchronous filter mode: 4-8 tokens per chunk, the filter's "
    "annotations sent on chunks of their own after the text they cover",
}

# Faults only some protocols speak (a wire shape of their own); elsewhere they are a 400.
PROTOCOL_FAULTS: dict[str, frozenset[str]] = {
    "content_filter": frozenset({"openai_chat", "azure_openai"}),
    "async_filter": frozenset({"azure_openai"}),
}
# Tokens per chunk in Azure's asynchronous filter mode (the text is released in larger runs).
ASYNC_FILTER_TOKENS_PER_EVENT = (4, 8)

# Faults answered with an HTTP error before any streaming, mapped to the error kind that each
# protocol module knows how to render.
HTTP_ERROR_FAULTS: dict[str, str] = {
    "429": "rate_limited",
    "500": "server_error",
    "529": "overloaded",
    "401": "auth_invalid",
}

# Faults that strike once half of the reply's tokens have been sent.
MID_STREAM_FAULTS = frozenset({"error_event", "drop", "stall", "malformed", "content_filter"})


def fault_at(tokens_to_send: int) -> int:
    """The token count after which a mid-stream fault strikes (at least one token first)."""
    return max(1, tokens_to_send // 2)
