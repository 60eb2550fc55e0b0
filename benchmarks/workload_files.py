"""A workload kept in a repository: `workload.toml` plus text files (docs/workloads.md).

    slug = "support-agent"
    name = "Support agent"
    system_prompt_file = "system.md"
    prompts_dir = "prompts"          # every .md/.txt file in it, by name; or:
    # prompt_files = ["prompts/refund.md", "prompts/customs.md"]
    context_file = "carrier-terms.txt"
    context_tokens = 8000
    tools_file = "tools.json"        # [{"name", "description", "parameters"}]
    reasoning_effort = "low"
    max_output_tokens = 1024
    concurrency = 1
    repetitions = 12

Every file named must lie inside the workload's folder. Reading never logs the text.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

MANIFEST = "workload.toml"
PROMPT_SUFFIXES = (".md", ".txt")
PLAIN_KEYS = (
    "name",
    "context_tokens",
    "reasoning_effort",
    "max_output_tokens",
    "concurrency",
    "repetitions",
    "cold_connections",
    "enabled",
)
FILE_KEYS = ("system_prompt_file", "prompts_dir", "prompt_files", "context_file", "tools_file")


class WorkloadFileError(ValueError):
    """The folder does not describe a workload; the message says what to fix."""


def read_workload_folder(path: Path) -> tuple[str, dict[str, Any]]:
    """(slug, Workload field values) from a folder holding workload.toml (or the file itself)."""
    manifest = path / MANIFEST if path.is_dir() else path
    root = manifest.parent.resolve()
    try:
        spec = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WorkloadFileError(f"{manifest} does not exist.") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise WorkloadFileError(f"{manifest} is not valid TOML: {exc}") from None
    unknown = sorted(set(spec) - {"slug", *PLAIN_KEYS, *FILE_KEYS})
    if unknown:
        raise WorkloadFileError(f"{manifest.name}: unknown keys {', '.join(unknown)}.")
    slug = spec.get("slug")
    if not isinstance(slug, str) or not slug:
        raise WorkloadFileError(f"{manifest.name}: slug is required.")
    values: dict[str, Any] = {key: spec[key] for key in PLAIN_KEYS if key in spec}
    values.setdefault("name", slug)
    if "system_prompt_file" in spec:
        values["system_prompt"] = _text(root, spec["system_prompt_file"])
    if "context_file" in spec:
        values["context_document"] = _text(root, spec["context_file"])
    suite = _suite(root, spec)
    if suite:
        values["prompt_suite"] = suite
        values["prompt"] = suite[0]
    if "tools_file" in spec:
        try:
            values["tools"] = json.loads(_text(root, spec["tools_file"]))
        except ValueError as exc:
            raise WorkloadFileError(f"{spec['tools_file']} is not valid JSON: {exc}") from None
    return slug, values


def _suite(root: Path, spec: dict[str, Any]) -> list[str]:
    if "prompts_dir" in spec:
        folder = _inside(root, spec["prompts_dir"])
        if not folder.is_dir():
            raise WorkloadFileError(f"prompts_dir {spec['prompts_dir']!r} is not a folder.")
        files = sorted(p for p in folder.iterdir() if p.suffix in PROMPT_SUFFIXES)
        if not files:
            raise WorkloadFileError(f"prompts_dir {spec['prompts_dir']!r} has no .md/.txt file.")
        return [_read(p) for p in files]
    names = spec.get("prompt_files", [])
    if not isinstance(names, list):
        raise WorkloadFileError("prompt_files must be a list of file names.")
    return [_text(root, name) for name in names]


def _inside(root: Path, name: Any) -> Path:
    if not isinstance(name, str) or not name:
        raise WorkloadFileError(f"{name!r} is not a file name.")
    path = (root / name).resolve()
    if not path.is_relative_to(root):
        raise WorkloadFileError(f"{name!r} is outside the workload's folder.")
    return path


def _text(root: Path, name: Any) -> str:
    return _read(_inside(root, name))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise WorkloadFileError(f"{path.name} does not exist.") from None
    except UnicodeDecodeError:
        raise WorkloadFileError(f"{path.name} is not UTF-8 text.") from None
