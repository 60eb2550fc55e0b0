"""Router feeds: the advice in the shapes routers read.

- litellm: a LiteLLM Router `model_list` — one deployment per endpoint under one model group,
  `litellm_params.order` (1 = tried first) following the advice, list prices per token in the
  fields LiteLLM's cost tracking reads, the key as "os.environ/NAME" (LiteLLM's reference to
  an environment variable: the key itself never leaves the server it lives on).
- openrouter: a request-body fragment — `models` (fallback order) and a `provider` preference
  object with `order` and `allow_fallbacks`. The names are tokspeed's provider slugs; map them
  to OpenRouter's provider names where they differ.
- list: the endpoint slugs, best first.

Order: the recommended endpoint, then the rest in rank order (inside the budget first).
"""

from __future__ import annotations

from typing import Any

from .advice import Advice
from .ranking import Option

FORMATS = ("litellm", "openrouter", "list")
LITELLM_PREFIX = {
    "openai_chat": "openai",
    "openai_responses": "openai",
    "anthropic_messages": "anthropic",
    "gemini": "gemini",
}
PER_TOKEN = 1_000_000


def ordered(advice: Advice) -> list[Option]:
    chosen = advice.recommended
    rest = [o for o in advice.options if o is not chosen]
    return ([chosen] if chosen else []) + rest


def group_name(advice: Advice) -> str:
    return f"tokspeed-{advice.profile.slug}" if advice.profile else "tokspeed-advice"


def litellm(advice: Advice) -> dict[str, Any]:
    deployments = []
    for position, option in enumerate(ordered(advice), start=1):
        params: dict[str, Any] = {
            "model": f"{LITELLM_PREFIX.get(option.protocol, 'openai')}/{option.model}",
            "api_base": option.base_url,
            "order": position,
        }
        if option.api_key_env:
            params["api_key"] = f"os.environ/{option.api_key_env}"
        if option.price_in is not None and option.price_out is not None:
            params["input_cost_per_token"] = option.price_in / PER_TOKEN
            params["output_cost_per_token"] = option.price_out / PER_TOKEN
        if option.price_cached is not None:
            params["cache_read_input_token_cost"] = option.price_cached / PER_TOKEN
        deployments.append(
            {
                "model_name": group_name(advice),
                "litellm_params": params,
                "model_info": {"id": option.slug},
            }
        )
    return {"model_list": deployments}


def openrouter(advice: Advice) -> dict[str, Any]:
    options = ordered(advice)
    providers: list[str] = []
    for option in options:
        if option.provider_slug not in providers:
            providers.append(option.provider_slug)
    models: list[str] = []
    for option in options:
        if option.model not in models:
            models.append(option.model)
    return {"models": models, "provider": {"order": providers, "allow_fallbacks": True}}


def plain(advice: Advice) -> list[str]:
    return [option.slug for option in ordered(advice)]


def render(advice: Advice, format: str) -> Any:
    return {"litellm": litellm, "openrouter": openrouter, "list": plain}[format](advice)
