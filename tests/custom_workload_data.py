"""A custom workload as a team would write one: a long system prompt, a suite of real-looking
prompts, a real document as context, and an agent's tool schemas. Shared by the tests that
drive it through every protocol and grep every output for its text."""

from __future__ import annotations

from typing import Any

# A marker in every piece of text: a test greps logs, emails, exports and pages for it.
TEXT_MARK = "ZEBRAFINCH-7431"

_POLICY = (
    "You are the support assistant of Acme Logistics ({mark}). Answer customers about parcel "
    "tracking, customs holds, refunds and address changes. Rule {n}: never promise a delivery "
    "date the tracking system has not confirmed; cite the shipment's last scan; escalate any "
    "damaged-goods claim above 500 euros to a human agent with the case number. "
)


def system_prompt(chars: int = 20_000) -> str:
    parts, n = [], 0
    while sum(map(len, parts)) < chars:
        parts.append(_POLICY.format(mark=TEXT_MARK, n=n))
        n += 1
    return "".join(parts)[:chars]


def prompt_suite(count: int = 12) -> list[str]:
    topics = ("a customs hold", "a refund", "a changed address", "a damaged parcel")
    return [
        f"Customer {i} ({TEXT_MARK}) writes about {topics[i % len(topics)]} on order "
        f"AC-{1000 + i}: draft the reply, then list the tool calls you would make and why."
        for i in range(count)
    ]


def context_document() -> str:
    """A real-looking document: the carrier's terms, numbered clauses, ~60k characters."""
    clauses = []
    for i in range(400):
        clauses.append(
            f"§{i + 1}. {TEXT_MARK} carrier terms: parcels held by customs for more than "
            f"{i % 9 + 2} working days are returned to sender unless the consignee files the "
            f"import declaration; storage is charged at {i % 5 + 1} euros a day thereafter."
        )
    return "\n".join(clauses)


def tool_schemas(count: int = 6) -> list[dict[str, Any]]:
    names = ("track_parcel", "open_claim", "refund_order", "change_address", "escalate", "notify")
    return [
        {
            "name": names[i % len(names)] + ("" if i < len(names) else f"_{i}"),
            "description": f"{names[i % len(names)].replace('_', ' ')} for an order",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "description": "AC-number"},
                    "reason": {"type": "string"},
                    "amount_eur": {"type": "number", "minimum": 0},
                },
                "required": ["order_id"],
            },
        }
        for i in range(count)
    ]
