"""Lanes: the same model sold fast and dear or slow and cheap (docs/workloads.md, "Lanes").

An endpoint names its lane; each adapter asks for it its API's way (OpenAI `service_tier`,
Anthropic `service_tier`, Bedrock `performanceConfig` and `serviceTier`), and the lane the
provider says it served (OpenAI's `service_tier`, Anthropic's `usage.service_tier`, the
`performanceConfig` and `serviceTier` of Bedrock's `metadata` event) is recorded beside it. A
run served in a lower lane than it asked for is flagged and kept out of that lane's medians.
Gemini and Vertex Gemini ask for no lane (the endpoint refuses any but standard).
Pure data: no clock, no I/O.
"""

from __future__ import annotations

from typing import Any

STANDARD = "standard"
PRIORITY = "priority"
FLEX = "flex"
LATENCY_OPTIMIZED = "latency-optimized"
BATCH = "batch"
LANES = (STANDARD, PRIORITY, FLEX, LATENCY_OPTIMIZED, BATCH)
CHOICES = [(lane, lane) for lane in LANES]

# Higher is faster service; a served lane ranked below the asked one is a downgrade.
RANK = {BATCH: 0, FLEX: 1, STANDARD: 2, PRIORITY: 3, LATENCY_OPTIMIZED: 3}

# What each protocol family sends for a lane (absent: it cannot ask for that lane).
_OPENAI = {STANDARD: "default", PRIORITY: "priority", FLEX: "flex"}
_ANTHROPIC = {STANDARD: "standard_only", PRIORITY: "auto"}
# Bedrock: latency-optimized inference is `performanceConfig.latency`; priority and flex are
# the per-request `serviceTier.type` (botocore's ConverseStreamRequest).
_BEDROCK = {
    STANDARD: "standard",
    LATENCY_OPTIMIZED: "optimized",
    PRIORITY: "priority",
    FLEX: "flex",
}
_FAMILY = {
    "openai_chat": "openai",
    "openai_responses": "openai",
    "azure_openai": "openai",
    "azure_openai_responses": "openai",
    "anthropic_messages": "anthropic",
    "vertex_anthropic": "anthropic",
    "bedrock_converse": "bedrock",
}
_ASKS = {"openai": _OPENAI, "anthropic": _ANTHROPIC, "bedrock": _BEDROCK}
# What providers say they served, in tokspeed's words.
SERVED = {
    "default": STANDARD,
    "standard": STANDARD,
    "priority": PRIORITY,
    "scale": PRIORITY,
    "flex": FLEX,
    "batch": BATCH,
    "optimized": LATENCY_OPTIMIZED,
}


def supported(protocol: str) -> tuple[str, ...]:
    """The lanes a protocol can ask for ("standard" always: it asks for nothing special)."""
    asks = _ASKS.get(_FAMILY.get(protocol, ""), {})
    return tuple(lane for lane in LANES if lane == STANDARD or lane in asks)


def request_fields(protocol: str, lane: str) -> dict[str, Any]:
    """The body fields that ask `protocol` for `lane`; {} for the standard lane.

    ValueError for a lane the protocol cannot ask for (Endpoint.clean says so first).
    """
    if not lane or lane == STANDARD:
        return {}
    family = _FAMILY.get(protocol, "")
    value = _ASKS.get(family, {}).get(lane)
    if value is None:
        raise ValueError(f"the {protocol} protocol has no {lane} lane")
    if family == "bedrock" and lane == LATENCY_OPTIMIZED:
        return {"performanceConfig": {"latency": value}}
    if family == "bedrock":
        return {"serviceTier": {"type": value}}
    return {"service_tier": value}


def served(value: Any) -> str:
    """tokspeed's name for the lane a response says it was served in; "" when unknown."""
    return SERVED.get(value, "") if isinstance(value, str) else ""


def bedrock_served(metadata: dict[str, Any]) -> str:
    """The lane a Bedrock `metadata` event says it served: latency-optimized when its
    `performanceConfig.latency` is "optimized", else its `serviceTier.type` (priority, default,
    flex), else standard when the performance config says "standard"; "" when it says none."""
    config, tier = metadata.get("performanceConfig"), metadata.get("serviceTier")
    latency = config.get("latency") if isinstance(config, dict) else None
    if latency == "optimized":
        return LATENCY_OPTIMIZED
    said = served(tier.get("type")) if isinstance(tier, dict) else ""
    return said or served(latency)


def is_downgrade(asked: str, got: str) -> bool:
    """Served below the lane asked for (an unknown served lane is not a downgrade)."""
    if not got or not asked:
        return False
    return RANK.get(got, 2) < RANK.get(asked, 2)


def served_lane(asked: str, below: Any) -> str:
    """The lane a run was served in: the lowest of the lanes its requests were served in below
    the asked one (`below`: a run summary's {lane: requests}), else the asked lane (a provider
    that does not say which lane served a request counts as serving the asked one)."""
    lower = [lane for lane in below if lane in RANK] if isinstance(below, dict) else []
    return min(lower, key=lambda lane: (RANK[lane], lane)) if lower else asked
