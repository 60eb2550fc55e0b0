"""`manage.py speedtest` against the simulator: its table, its JSON and its failures."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.measure import SAMPLE_FIELDS
from providers.models import Endpoint, Provider
from providers.simulator.process import SimulatorHandle, start_simulator

MANAGE_PY = Path(__file__).resolve().parents[2] / "manage.py"
SECRET = "sk-speedtest-right-key-0123456789"  # noqa: S105 - a test key for the simulator


def speedtest(*args: str) -> str:
    out = StringIO()
    call_command("speedtest", *args, stdout=out)
    return out.getvalue()


def adhoc(sim: SimulatorHandle, model: str, *extra: str) -> list[str]:
    return ["--base-url", sim.openai_base, "--protocol", "openai_chat", "--model", model, *extra]


def run_manage(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(MANAGE_PY), "speedtest", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def keyed_simulator() -> Iterator[SimulatorHandle]:
    """A simulator that accepts only SECRET, for wrong-key behaviour."""
    with start_simulator(api_key=SECRET) as handle:
        yield handle


def test_it_prints_a_row_per_request_and_the_medians(simulator: SimulatorHandle) -> None:
    text = speedtest(*adhoc(simulator, "sim-fast+tokens=30", "--concurrency", "2", "--repeat", "2"))
    lines = text.splitlines()

    assert "(simulated)" in lines[0] and "concurrency 2 × 2 rounds" in lines[0]
    assert lines[1].split()[:3] == ["#", "TTFT", "ms"]
    rows = [line.split() for line in lines[2:6]]
    assert [row[0] for row in rows] == ["1", "2", "3", "4"]
    assert all(row[4:6] == ["30", "usage"] for row in rows)  # tokens and their source
    ttfts = [float(row[1]) for row in rows]
    median_row = next(line.split() for line in lines if line.startswith("median"))
    assert float(median_row[1]) == pytest.approx(statistics.median(ttfts), abs=0.1)
    assert "ok 4/4" in text and "errors: none" in text


def test_it_prints_one_json_object_keyed_by_section_4_names(simulator: SimulatorHandle) -> None:
    text = speedtest(*adhoc(simulator, "sim-fast+tokens=20", "--repeat", "3", "--json"))
    payload = json.loads(text)  # the whole output is one JSON object

    samples, summary = payload["samples"], payload["summary"]
    assert len(samples) == 3
    for sample in samples:
        assert set(sample) == set(SAMPLE_FIELDS) | {"e2e_ms"}
        assert sample["output_tokens"] == 20 and sample["error_category"] == ""
        assert sample["e2e_ms"] == sample["total_ms"]
    assert summary["ttft_ms"]["p50"] == pytest.approx(
        statistics.median(s["ttft_ms"] for s in samples)
    )
    assert summary["ok"] == 3 and summary["simulated"] is True
    assert summary["protocol"] == "openai_chat" and summary["repeat"] == 3


def test_it_pads_the_prompt_with_the_requested_context(simulator: SimulatorHandle) -> None:
    short = json.loads(speedtest(*adhoc(simulator, "sim-fast+tokens=5", "--repeat", "1", "--json")))
    long = json.loads(
        speedtest(
            *adhoc(simulator, "sim-fast+tokens=5", "--repeat", "1", "--json"),
            "--context-tokens",
            "2000",
        )
    )
    added = long["samples"][0]["input_tokens"] - short["samples"][0]["input_tokens"]
    assert 1500 <= added <= 2500


@pytest.mark.django_db
def test_it_measures_a_registered_endpoint_by_slug(simulator: SimulatorHandle) -> None:
    provider = Provider.objects.create(
        slug="sim-anthropic",
        name="Simulated Anthropic",
        protocol="anthropic_messages",
        base_url=simulator.base_url,
        simulated=True,
    )
    Endpoint.objects.create(
        provider=provider, slug="sim-fast-anthropic", model="sim-fast+tokens=12"
    )

    text = speedtest("sim-fast-anthropic", "--repeat", "2")

    assert text.splitlines()[0].startswith("speedtest · sim-fast+tokens=12 @ Simulated Anthropic")
    # The provider's name says "Simulated" already: no second "(simulated)".
    assert text.lower().count("simulated") == 1 and "anthropic_messages" in text
    assert "ok 2/2" in text


@pytest.mark.django_db
def test_it_hints_at_the_setting_when_a_registered_endpoint_is_loopback(
    simulator: SimulatorHandle, settings
) -> None:
    """Outside `make run` private targets are refused; the slug form says how to allow them."""
    provider = Provider.objects.create(
        slug="sim-openai", name="SimCloud", protocol="openai_chat", base_url=simulator.openai_base
    )
    Endpoint.objects.create(provider=provider, slug="sim-fast-openai", model="sim-fast")
    settings.TOKSPEED_ALLOW_PRIVATE_ENDPOINTS = False

    with pytest.raises(CommandError) as refused:
        speedtest("sim-fast-openai")

    said = str(refused.value)
    assert "resolves to a private or loopback address" in said, said
    assert "set TOKSPEED_ALLOW_PRIVATE_ENDPOINTS=1" in said, f"no hint: {said}"


@pytest.mark.django_db
def test_it_refuses_an_unknown_endpoint_slug() -> None:
    with pytest.raises(CommandError, match="Unknown endpoint 'nope'"):
        speedtest("nope")


def test_it_needs_the_key_variable_it_was_given(
    simulator: SimulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOKSPEED_TEST_UNSET_KEY", raising=False)
    with pytest.raises(CommandError, match="TOKSPEED_TEST_UNSET_KEY"):
        speedtest(*adhoc(simulator, "sim-fast", "--api-key-env", "TOKSPEED_TEST_UNSET_KEY"))


def test_it_stops_after_a_round_that_failed_entirely(
    keyed_simulator: SimulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKSPEED_TEST_KEY", "sk-wrong-key-000000000000")
    out = StringIO()
    with pytest.raises(CommandError, match="the only request failed; first: auth"):
        call_command(
            "speedtest",
            *adhoc(keyed_simulator, "sim-fast", "--api-key-env", "TOKSPEED_TEST_KEY", "--json"),
            stdout=out,
        )
    summary = json.loads(out.getvalue())["summary"]
    # One round of five: a wrong key does not heal, and the summary says how many rounds ran.
    assert (summary["samples"], summary["repeat"], summary["repeat_requested"]) == (1, 1, 5)


def test_it_exits_non_zero_with_one_line_for_a_wrong_key(keyed_simulator: SimulatorHandle) -> None:
    wrong = "sk-wrong-key-111111111111111"
    result = run_manage(
        *adhoc(keyed_simulator, "sim-fast+tokens=5", "--api-key-env", "TS_KEY", "--json"),
        env={"TS_KEY": wrong},
    )

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "auth" in result.stderr
    assert json.loads(result.stdout)["summary"]["errors_by_category"] == {"auth": 1}
    assert wrong not in result.stdout + result.stderr


def test_it_reaches_the_right_key_from_a_subprocess(keyed_simulator: SimulatorHandle) -> None:
    result = run_manage(
        *adhoc(keyed_simulator, "sim-fast+tokens=5", "--api-key-env", "TS_KEY", "--repeat", "1"),
        env={"TS_KEY": SECRET},
    )

    assert result.returncode == 0, result.stderr
    assert "ok 1/1" in result.stdout and SECRET not in result.stdout + result.stderr


def test_it_exits_non_zero_for_an_unreachable_host() -> None:
    result = run_manage(
        "--base-url", "http://127.0.0.1:9/v1", "--protocol", "gemini", "--model", "m"
    )

    assert result.returncode == 1
    assert result.stderr.strip().startswith(
        "CommandError: the only request failed; first: unreachable"
    )
    assert "127.0.0.1:9" in result.stderr and result.stderr.count("\n") == 1
    assert result.stdout == ""  # no header, no table of empty rows


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--concurrency", "0"], "--concurrency: 0 is not between 1 and 1024"),
        (["--repeat", "many"], "--repeat: 'many' is not a whole number"),
        (["--protocol", "grpc"], "--protocol: invalid choice"),
    ],
)
def test_it_rejects_a_bad_flag_with_one_line(args: list[str], message: str) -> None:
    result = run_manage(*args)

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr


@pytest.fixture
def burst_server() -> Iterator[str]:
    """An OpenAI-compatible server on loopback that writes its 24 text events in 3 bursts of 8,
    as a client that fell behind would read them: a saturated stream, every time."""
    import asyncio
    import threading

    from aiohttp import web

    def chunk(text: str, **extra: object) -> bytes:
        delta = {"choices": [{"index": 0, "delta": {"content": text}, **extra}]}
        return f"data: {json.dumps(delta)}\n\n".encode()

    async def completions(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for burst in range(3):
            await asyncio.sleep(0.05)
            await response.write(b"".join(chunk(f" w{burst}-{i}") for i in range(8)))
        usage = {"prompt_tokens": 10, "completion_tokens": 24, "total_tokens": 34}
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage}
        await response.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001 - the bound ephemeral port
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/v1"
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)


def test_it_says_when_the_client_and_not_the_provider_set_the_pace(burst_server: str) -> None:
    args = ["--base-url", burst_server, "--protocol", "openai_chat", "--model", "m"]
    text = speedtest(*args, "--concurrency", "2", "--repeat", "1")
    summary = json.loads(speedtest(*args, "--concurrency", "2", "--repeat", "1", "--json"))[
        "summary"
    ]

    row = next(line.split() for line in text.splitlines() if line.split()[:1] == ["1"])
    assert row[6:8] == ["sat.", "sat."], f"the ITL columns should say why they are empty: {row}"
    assert "client saturated in 2 of 2 requests" in text and "concurrency 2" in text
    assert summary["saturated"] == 2 and summary["itl_withheld"] == {"all": 2}
    # Spread over the bursts the gaps would read ~6 ms; nothing shows the server's pace.
    assert "itl_p50_ms" not in summary and "itl_p99_ms" not in summary
    sample = json.loads(speedtest(*args, "--concurrency", "1", "--repeat", "1", "--json"))[
        "samples"
    ][0]
    assert sample["itl_p50_ms"] is None and sample["itl_withheld"] == "all" and sample["saturated"]
