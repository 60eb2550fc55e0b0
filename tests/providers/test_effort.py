"""Reasoning effort (providers.effort): every value a workload may carry is one some adapter
sends or maps, and a value none does is refused with the list of those that exist."""

from __future__ import annotations

import pytest

from providers.anthropic_messages import thinking_option
from providers.base import EndpointConfig
from providers.effort import BUDGET, WORDS, effort_problem
from providers.gemini import thinking_config
from providers.registry import get_adapter

# OpenAI's documented reasoning_effort values (/work/shared/PROTOCOLS.md, Chat Completions).
OPENAI_EFFORTS = {"none", "minimal", "low", "medium", "high", "xhigh", "max"}


def understood_by(effort: str) -> set[str]:
    """The API families whose adapter sends or maps `effort` without refusing it."""
    apis = {"openai"} if effort in OPENAI_EFFORTS else set()
    for api, mapping in (
        ("anthropic", lambda e: thinking_option(e, 8192)),
        ("gemini", thinking_config),
    ):
        try:
            mapping(effort)
        except ValueError:
            continue
        apis.add(api)
    return apis


@pytest.mark.parametrize("effort", [*WORDS, "1024", "-1", "0"])
def test_it_accepts_only_efforts_an_adapter_can_send(effort: str) -> None:
    assert effort_problem(effort) == ""
    assert understood_by(effort), f"{effort!r} is accepted but no adapter sends it"


@pytest.mark.parametrize("effort", ["extreme", "High", " low", "turbo", "1e3", "-2", "007"])
def test_it_refuses_an_effort_no_adapter_sends_and_lists_those_that_exist(effort: str) -> None:
    problem = effort_problem(effort)
    assert problem.startswith(f"{effort!r} is not a reasoning effort any API takes.")
    for word in WORDS:
        assert f"{word} (" in problem


def test_it_sends_an_accepted_level_to_openai_as_it_is() -> None:
    config = EndpointConfig(
        base_url="https://api.example.test",
        protocol="openai_chat",
        model="m",
        reasoning_effort="xhigh",
    )
    body = get_adapter("openai_chat").build_request(config, prompt="Hi", max_tokens=5).json
    assert body["reasoning_effort"] == "xhigh"
    assert BUDGET.fullmatch("8192") and not BUDGET.fullmatch("12345678")
