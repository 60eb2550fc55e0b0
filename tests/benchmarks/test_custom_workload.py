"""A team's own workload (docs/workloads.md) through every protocol against the simulator.

The simulator reads the system prompt and the tools only from each API's own place (and
rejects tools in another API's shape), records what it found, and counts them as input: so
these runs show that every adapter put them right and that the stored input tokens are the
provider's count. Samples are written by the runner's writer thread: committed data.
"""

from __future__ import annotations

from datetime import UTC, datetime
from statistics import median

import pytest

from benchmarks import runner
from benchmarks.models import Run, RunStatus, Vantage, Workload
from benchmarks.sample_writer import SampleWriter
from providers.models import Endpoint, Provider
from providers.registry import ADAPTERS
from tests.celery_helpers import FILESYSTEM_URL, broker, filesystem_options
from tests.custom_workload_data import context_document, prompt_suite, system_prompt, tool_schemas

pytestmark = pytest.mark.django_db(transaction=True)

KEY_ENV = "TOKSPEED_TEST_CUSTOM_KEY"


SLOT = datetime(
    2026, 3, 10, 12, tzinfo=UTC
)  # a run's slot is a label here: nothing reads the clock


@pytest.fixture
def fs_broker(tmp_path):
    """A run's end publishes its follow-up tasks: to a filesystem broker in a temp folder."""
    with broker(FILESYSTEM_URL, filesystem_options(tmp_path)):
        yield tmp_path


CONTEXT_TOKENS = 3_000


def base_url(sim, protocol: str) -> str:
    if protocol in ("openai_chat", "openai_responses"):
        return sim.openai_base
    if protocol.startswith("azure"):
        return sim.base_url + "/openai/v1"
    if protocol.startswith("vertex"):
        return sim.base_url + "/v1/projects/tokspeed-test/locations/us-central1"
    return sim.base_url


def custom_workload(**changes) -> Workload:
    fields = {
        "slug": "support-agent",
        "name": "Support agent",
        "system_prompt": system_prompt(20_000),
        "prompt_suite": prompt_suite(12),
        "context_document": context_document(),
        "context_tokens": CONTEXT_TOKENS,
        "tools": tool_schemas(6),
        "max_output_tokens": 40,
    }
    fields.update(changes)
    workload = Workload(**fields)
    workload.full_clean()
    workload.save()
    return workload


def custom_run(sim, protocol: str, workload: Workload, *, concurrency=2, repetitions=6) -> Run:
    provider = Provider.objects.create(
        slug=f"sim-{protocol}".replace("_", "-"),
        name=f"Sim {protocol}",
        protocol=protocol,
        base_url=base_url(sim, protocol),
        api_key_env=KEY_ENV,
        simulated=True,
    )
    endpoint = Endpoint.objects.create(
        provider=provider, slug=f"e-{protocol}".replace("_", "-"), model="sim-fast+tokens=20"
    )
    vantage, _ = Vantage.objects.get_or_create(slug="here", defaults={"label": "h", "queue": "h"})
    return Run.objects.create(
        endpoint=endpoint,
        workload=workload,
        vantage=vantage,
        slot=SLOT,
        concurrency=concurrency,
        repetitions=repetitions,
        context_tokens=workload.context_tokens,
    )


def spy_request_ids(monkeypatch) -> dict[int, str]:
    seen: dict[int, str] = {}
    put = SampleWriter.put

    def recording(self, index, measurement):
        seen[index] = measurement.request_id
        put(self, index, measurement)

    monkeypatch.setattr(SampleWriter, "put", recording)
    return seen


@pytest.mark.parametrize("protocol", sorted(ADAPTERS))
def test_it_sends_a_custom_workload_in_each_apis_places_and_stores_the_providers_count(
    simulator,
    fs_broker,
    monkeypatch,
    protocol,
) -> None:
    monkeypatch.setenv(KEY_ENV, "sim-key")
    workload = custom_workload()
    run = custom_run(simulator, protocol, workload)
    request_ids = spy_request_ids(monkeypatch)

    assert runner.execute(run.id, worker="test@here") == RunStatus.DONE, run.failure_reason

    run.refresh_from_db()
    samples = list(run.samples.order_by("index"))
    assert len(samples) == 12 and all(s.ok for s in samples), [s.error_message for s in samples]
    names = [tool["name"] for tool in tool_schemas(6)]
    truths = {s.index: simulator.truth(request_ids[s.index]) for s in samples}
    for sample in samples:
        truth = truths[sample.index]
        assert truth["system_chars"] == 20_000, f"{protocol}: system prompt not in its place"
        assert truth["tool_names"] == names, f"{protocol}: tools not sent in the API's shape"
        assert sample.input_tokens == truth["prompt_tokens"], "stored input ≠ provider's count"
        assert sample.prompt_index == sample.index % 12
    # Every prompt of the suite was sent once; the breakdown has each one's figures.
    breakdown = run.summary["prompts"]
    assert [row["prompt"] for row in breakdown] == list(range(12))
    for row in breakdown:
        sample = samples[row["prompt"]]
        assert row["samples"] == row["ok"] == 1
        assert row["input_tokens"] == truths[sample.index]["prompt_tokens"]
        assert row["ttft_ms"] == sample.ttft_ms
    # The run's medians are over every prompt; its input tokens are the provider's median.
    assert run.input_tokens == round(median(t["prompt_tokens"] for t in truths.values()))
    assert run.ttft_p50_ms == pytest.approx(median(s.ttft_ms for s in samples))


def test_it_cuts_the_context_document_to_the_workloads_size_in_the_providers_tokens(
    simulator,
    fs_broker,
    monkeypatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, "sim-key")
    bare = custom_workload(slug="bare", context_tokens=0, context_document="")
    with_context = custom_workload(slug="with-context")
    runs = [custom_run(simulator, "anthropic_messages", bare, repetitions=6)]
    for run in runs:
        assert runner.execute(run.id, worker="t") == RunStatus.DONE
    run = Run.objects.create(
        endpoint=runs[0].endpoint,
        workload=with_context,
        vantage=runs[0].vantage,
        slot=SLOT,
        concurrency=2,
        repetitions=6,
        context_tokens=CONTEXT_TOKENS,
    )
    assert runner.execute(run.id, worker="t") == RunStatus.DONE
    without = {s.prompt_index: s.input_tokens for s in runs[0].samples.all()}
    added = [s.input_tokens - without[s.prompt_index] for s in run.samples.all()]
    # Every request carried the document's first ~3,000 tokens as the provider counts them
    # (cut at a word boundary: a few characters short at most).
    assert all(CONTEXT_TOKENS * 0.98 <= extra <= CONTEXT_TOKENS * 1.01 for extra in added), added


def test_it_sends_the_workloads_reasoning_effort_and_output_cap(
    simulator, fs_broker, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sim-key")
    workload = custom_workload(reasoning_effort="high", max_output_tokens=4_000, context_tokens=0)
    run = custom_run(simulator, "openai_chat", workload, concurrency=1, repetitions=1)
    bodies = []
    adapter = ADAPTERS["openai_chat"]
    build = type(adapter).build_request

    def spying(self, config, *, prompt, max_tokens):
        spec = build(self, config, prompt=prompt, max_tokens=max_tokens)
        bodies.append(spec.json)
        return spec

    monkeypatch.setattr(type(adapter), "build_request", spying)
    assert runner.execute(run.id, worker="t") == RunStatus.DONE
    assert bodies and all(b["reasoning_effort"] == "high" for b in bodies), bodies[:1]
    assert all(b["max_tokens"] == 4_000 for b in bodies)
    assert run.endpoint.reasoning_effort == "", "the endpoint's own setting was not changed"
