""" "Test connection": one short request through the endpoint's real adapter, right now.

The admin and the API offer it when an endpoint is saved, so a wrong URL, model or key shows up
before the first scheduled run instead of as an outage alert the next morning. Nothing is stored.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.clients import provider_client
from benchmarks.measure import Limits, measure_request
from benchmarks.prompts import STANDARD_PROMPT, build_prompt
from providers.config import MissingKey, endpoint_config
from providers.models import Endpoint

# Enough tokens to see a decode speed, few enough to cost nothing and return in a second or two.
CHECK_MAX_TOKENS = 32
# A person is waiting for the answer on a page: never the scheduled runs' 10-minute deadline.
CHECK_DEADLINE_S = 30.0


@dataclass(frozen=True)
class ConnectionCheck:
    ok: bool
    summary: str  # one sentence a person reads
    ttft_ms: float | None = None
    output_tokens: int | None = None
    decode_tps: float | None = None
    http_status: int | None = None
    error_category: str = ""
    error_message: str = ""  # redacted by the measuring client: never holds the key

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_connection(endpoint: Endpoint) -> ConnectionCheck:
    """Stream the standard prompt once with a small max_tokens; say how it went."""
    try:
        config = endpoint_config(endpoint)
    except MissingKey as exc:
        return ConnectionCheck(ok=False, summary=str(exc), error_category="auth")
    limits = Limits.from_settings()
    limits = Limits(
        connect_timeout_s=min(limits.connect_timeout_s, CHECK_DEADLINE_S),
        idle_timeout_s=min(limits.idle_timeout_s, CHECK_DEADLINE_S),
        deadline_s=CHECK_DEADLINE_S,
        max_bytes=limits.max_bytes,
    )
    m = asyncio.run(_measure_once(config, limits, endpoint.provider))
    if m.ok:
        speed = f", {m.decode_tps:,.0f} tok/s" if m.decode_tps else ""
        return ConnectionCheck(
            ok=True,
            summary=f"Connected: first token after {m.ttft_ms:,.0f} ms, "
            f"{m.output_tokens} tokens{speed}.",
            ttft_ms=m.ttft_ms,
            output_tokens=m.output_tokens,
            decode_tps=m.decode_tps,
            http_status=m.http_status,
        )
    status = f" (HTTP {m.http_status})" if m.http_status else ""
    return ConnectionCheck(
        ok=False,
        summary=f"Failed{status}: {m.error_category}: {m.error_message}",
        http_status=m.http_status,
        error_category=m.error_category,
        error_message=m.error_message,
    )


async def _measure_once(config, limits: Limits, provider):  # noqa: ANN001, ANN202 - internal helper
    async with provider_client(provider, limits=limits, max_connections=1) as client:
        return await measure_request(
            client,
            config,
            prompt=build_prompt(prompt=STANDARD_PROMPT),
            max_tokens=CHECK_MAX_TOKENS,
            limits=limits,
        )
