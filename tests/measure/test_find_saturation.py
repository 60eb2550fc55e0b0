"""`manage.py find_saturation` tells the concurrency at which this machine falls behind."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from benchmarks.management.commands.find_saturation import Level, ramp


def fake_machine(falls_behind_at: int):
    """A client that keeps up below `falls_behind_at` streams and is saturated from there."""
    tried: list[int] = []

    def measure(concurrency: int) -> Level:
        tried.append(concurrency)
        saturated = concurrency if concurrency >= falls_behind_at else 0
        return Level(concurrency, concurrency, saturated, saturated, 0.0)

    return measure, tried


def test_it_doubles_until_a_stream_is_saturated_then_narrows_the_gap() -> None:
    measure, tried = fake_machine(falls_behind_at=100)

    levels, good, bad = ramp(measure, max_concurrency=1024, out_of_time=lambda: False)

    assert tried == [1, 2, 4, 8, 16, 32, 64, 128, 96, 112, 104]
    assert (good, bad) == (96, 104) and [lv.concurrency for lv in levels] == tried


def test_it_says_so_when_it_never_fell_behind_or_ran_out_of_time() -> None:
    measure, tried = fake_machine(falls_behind_at=10_000)
    assert ramp(measure, max_concurrency=48, out_of_time=lambda: False)[1:] == (48, None)
    assert tried[-2:] == [32, 48]

    measure, tried = fake_machine(falls_behind_at=10_000)
    clock = iter([False, False, True])
    assert ramp(measure, max_concurrency=1024, out_of_time=lambda: next(clock))[1:] == (2, None)


def test_it_ramps_against_the_simulator_on_loopback() -> None:
    out = StringIO()
    call_command(
        "find_saturation",
        "--token-ms", "20", "--tokens", "20", "--max-concurrency", "4", "--json",
        stdout=out,
    )  # fmt: skip
    answer = json.loads(out.getvalue())

    levels = answer["levels"]
    assert [lv["concurrency"] for lv in levels][:2] == [1, 2]
    assert all(lv["ok"] == lv["concurrency"] for lv in levels)
    kept_up = [lv["concurrency"] for lv in levels if lv["saturated"] == 0]
    # Whatever the load, the answer is the highest level that kept up below the first that did not.
    first_behind = next((lv["concurrency"] for lv in levels if lv["saturated"]), None)
    assert answer["saturated_from"] == first_behind
    assert answer["kept_up_to"] == max((c for c in kept_up), default=None)


def test_it_refuses_a_pace_it_cannot_simulate() -> None:
    with pytest.raises(CommandError, match="--token-ms"):
        call_command("find_saturation", "--token-ms", "0")
