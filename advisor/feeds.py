"""Router feeds: the advice in the shapes routers read.

- litellm: a LiteLLM Router `model_list` — one deployment per endpoint under one model group,
  in the form LiteLLM wants for its protocol (advisor.litellm_params: `azure/…` + `api_version`,
  `bedrock/converse/…` + `aws_region_name`, `vertex_ai/…` + project and location, Gemini's
  `api_base` with its version),
  `litellm_params.order` (1 = tried first) following the advice, list prices per token in the
  fields LiteLLM's cost tracking reads, the key as "os.environ/NAME" (LiteLLM's reference to
  an environment variable: the key itself never leaves the server it lives on).
- openrouter: a request-body fragment — `models` (fallback order) and a `provider` preference
  object with `order` and `allow_fallbacks`, in OpenRouter's own model ids and provider slugs
  (advisor.openrouter_names); `unmapped` names the endpoints OpenRouter has no name for, and why.
- list: the endpoint slugs, best first.

Order: the recommended endpoint, then the rest in rank order (inside the budget first).
"""

from __future__ import annotations

from typing import Any

from . import litellm_params, openrouter_names
from .advice import Advice
from .ranking import Option

FORMATS = ("litellm", "openrouter", "list")
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
        params = litellm_params.route(option.protocol, option.model, option.base_url)
        params["order"] = position
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


def _unmapped(option: Option, model: str | None, provider: str | None) -> dict[str, str] | None:
    missing = []
    if provider is None and option.provider_slug != "openrouter":
        missing.append(f"provider {option.provider_slug!r}")
    if model is None:
        missing.append(f"model {option.model!r}")
    if not missing:
        return None
    why = "a simulated endpoint" if option.simulated else "not known by these names on OpenRouter"
    return {"endpoint": option.slug, "reason": f"{' and '.join(missing)}: {why}"}


def openrouter(advice: Advice) -> dict[str, Any]:
    """OpenRouter's names for the ordered endpoints; those without one listed in `unmapped`."""
    providers: list[str] = []
    models: list[str] = []
    unmapped: list[dict[str, str]] = []
    for option in ordered(advice):
        model = openrouter_names.model_name(option.model, option.display_name, option.provider_slug)
        provider = openrouter_names.provider_name(option.provider_slug)
        if (gap := _unmapped(option, model, provider)) is not None:
            unmapped.append(gap)
            continue
        if model not in models:
            models.append(model)
        if provider is not None and provider not in providers:
            providers.append(provider)
    return {
        "models": models,
        "provider": {"order": providers, "allow_fallbacks": True},
        "unmapped": unmapped,
    }


def plain(advice: Advice) -> list[str]:
    return [option.slug for option in ordered(advice)]


def render(advice: Advice, format: str) -> Any:
    return {"litellm": litellm, "openrouter": openrouter, "list": plain}[format](advice)
