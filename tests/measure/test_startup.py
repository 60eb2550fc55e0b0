"""A plain OpenAI-compatible measurement starts lean: cloud SDKs, number crunching and Celery load
only when a protocol or a task needs them (bench/startup.py measures the CPU and memory saved)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from providers.models import Protocol
from providers.registry import ADAPTERS, get_adapter

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "botocore",
    "numpy",
    "scipy",
    "ruptures",
    "benchmarks.rollups",
    "benchmarks.finish",
    "celery",  # settings and Django's set-up never make the Celery app (tokspeed/celery.py)
    "kombu",
)


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after Django's set-up and `code`."""
    script = (
        "import django, json, os, sys;"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'tokspeed.settings');"
        f"django.setup(); {code}; print(json.dumps(sorted(sys.modules)))"
    )
    env = {**os.environ, "DATABASE_URL": "sqlite:///:memory:"}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_it_starts_speedtest_without_cloud_sdks_or_the_finishing_code():
    modules = loaded_after(
        "from benchmarks.management.commands import speedtest;"
        "from providers.registry import get_adapter; get_adapter('openai_chat')"
    )

    loaded = sorted({prefix for prefix in HEAVY for m in modules if m.startswith(prefix)})
    assert loaded == [], f"a plain OpenAI-compatible speedtest imported {loaded}"


def test_it_loads_a_cloud_adapter_when_its_protocol_is_asked_for():
    modules = loaded_after(
        "from providers.registry import get_adapter; get_adapter('bedrock_converse')"
    )

    assert "botocore" in modules, "Bedrock's adapter needs botocore's event stream parser"


def test_it_has_an_adapter_named_for_every_protocol():
    assert sorted(ADAPTERS) == sorted(Protocol.values)
    assert {p: get_adapter(p).name for p in Protocol.values} == {p: p for p in Protocol.values}
