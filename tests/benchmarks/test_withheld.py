"""benchmarks.withheld: a provider's message with a custom workload's text taken out, the rest
of it kept."""

from __future__ import annotations

from benchmarks.models import Workload
from benchmarks.withheld import SPAN, STRIDE, WITHHELD, Withheld
from tests.custom_workload_data import (
    TEXT_MARK,
    context_document,
    prompt_suite,
    system_prompt,
    tool_schemas,
)

SYSTEM = system_prompt(5_000)


def custom() -> Workload:
    return Workload(
        slug="w",
        system_prompt=SYSTEM,
        prompt_suite=prompt_suite(3),
        context_document=context_document(),
        tools=tool_schemas(2),
    )


def test_it_takes_out_every_quoted_stretch_and_keeps_the_rest() -> None:
    withheld = Withheld.of(custom())
    document = context_document()
    tool = tool_schemas(2)[1]["name"]
    quoted = f"Bad request: {SYSTEM[1003:1290]} / {document[500:620]} / tool {tool}"
    said = withheld(quoted)
    assert said == f"Bad request: {WITHHELD} / {WITHHELD} / tool {WITHHELD}"
    assert TEXT_MARK not in said


def test_it_finds_a_quote_whose_line_breaks_became_spaces_and_one_cut_short() -> None:
    document = context_document()
    start = document.index("\n") - 40  # a quote across two of the document's lines
    message = "Error: " + " ".join(document[start : start + 200].split())[:150] + "…"
    assert Withheld.of(custom())(message) == f"Error: {WITHHELD}…"


def test_it_leaves_messages_without_a_quote_and_short_common_runs_alone() -> None:
    withheld = Withheld.of(custom())
    for message in ("Rate limit reached, retry in 20s", "the order", SYSTEM[: SPAN - 1]):
        assert withheld(message) == message
    assert withheld(SYSTEM[7 : 7 + SPAN + STRIDE - 1]) == WITHHELD  # the shortest stretch found


def test_it_withholds_nothing_from_a_standard_workloads_messages() -> None:
    standard = Workload(slug="base")
    assert not standard.is_custom
    assert Withheld.of(standard)(f"echo: {standard.prompt}") == f"echo: {standard.prompt}"
