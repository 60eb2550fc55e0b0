"""Simulated lanes: a priority (or latency-optimized) lane faster and dearer, a flex lane slower,
and a downgrade to the standard lane once a model's priority quota is spent (`+quota=N`: the
first N priority requests of that model name are served priority, later ones standard)."""

from __future__ import annotations

from typing import Any

from providers import lanes

# (TTFT multiplier, decode-rate multiplier) of each served lane.
SPEED = {
    lanes.STANDARD: (1.0, 1.0),
    lanes.PRIORITY: (0.6, 1.8),
    lanes.LATENCY_OPTIMIZED: (0.6, 1.8),
    lanes.FLEX: (2.0, 0.5),
    lanes.BATCH: (3.0, 0.5),
}
_OPENAI_ASKS = {"priority": lanes.PRIORITY, "flex": lanes.FLEX, "scale": lanes.PRIORITY}
_OPENAI_SAYS = {lanes.STANDARD: "default", lanes.PRIORITY: "priority", lanes.FLEX: "flex"}
_ANTHROPIC_SAYS = {lanes.STANDARD: "standard", lanes.PRIORITY: "priority"}
# Bedrock's metadata event: the encoder writes `performanceConfig.latency` for standard and
# optimized, `serviceTier.type` for priority, default (standard) and flex.
_BEDROCK_SAYS = {
    lanes.STANDARD: "standard",
    lanes.LATENCY_OPTIMIZED: "optimized",
    lanes.PRIORITY: "priority",
    lanes.FLEX: "flex",
}
_BEDROCK_TIERS = {"priority": lanes.PRIORITY, "flex": lanes.FLEX}
_SAYS = {
    "openai_chat": _OPENAI_SAYS,
    "openai_responses": _OPENAI_SAYS,
    "azure_openai": _OPENAI_SAYS,
    "azure_openai_responses": _OPENAI_SAYS,
    "anthropic_messages": _ANTHROPIC_SAYS,
    "vertex_anthropic": _ANTHROPIC_SAYS,
    "bedrock_converse": _BEDROCK_SAYS,
}


def asked(protocol: str, body: dict[str, Any]) -> str:
    """The lane a request asks for, in tokspeed's words (standard when it asks for none)."""
    tier = body.get("service_tier")
    if protocol in ("anthropic_messages", "vertex_anthropic"):
        return lanes.PRIORITY if tier == "auto" else lanes.STANDARD
    if protocol == "bedrock_converse":
        config, service = body.get("performanceConfig"), body.get("serviceTier")
        if isinstance(config, dict) and config.get("latency") == "optimized":
            return lanes.LATENCY_OPTIMIZED
        kind = service.get("type") if isinstance(service, dict) else None
        return _BEDROCK_TIERS.get(kind, lanes.STANDARD) if isinstance(kind, str) else lanes.STANDARD
    if protocol in _SAYS:
        return _OPENAI_ASKS.get(tier, lanes.STANDARD) if isinstance(tier, str) else lanes.STANDARD
    return lanes.STANDARD


class LaneQuota:
    """Priority requests served per model name (the `+quota=N` option's counter)."""

    def __init__(self) -> None:
        self.used: dict[str, int] = {}

    def serve(self, model: str, lane: str, quota: int | None) -> str:
        if lane not in (lanes.PRIORITY, lanes.LATENCY_OPTIMIZED) or quota is None:
            return lane
        used = self.used.get(model, 0)
        self.used[model] = used + 1
        return lane if used < quota else lanes.STANDARD


def says(protocol: str, lane: str) -> str:
    """What the protocol's response says it served ("" where the API says nothing)."""
    return _SAYS.get(protocol, {}).get(lane, "")
