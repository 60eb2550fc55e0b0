"""A team's own workload from every door: files in a repository, the dashboard, the API and
the admin; its text readable only with the permission; the shared boards keep the standard
workloads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import CommandError, call_command
from django.test import Client

from benchmarks.models import Workload
from benchmarks.prompts import STANDARD_PROMPT
from benchmarks.selectors.scope import Workloads
from tests.celery_helpers import worker_database_url
from tests.custom_workload_data import (
    TEXT_MARK,
    context_document,
    prompt_suite,
    system_prompt,
    tool_schemas,
)

pytest_plugins = ["tests.api_fixtures"]
pytestmark = pytest.mark.django_db


def write_folder(root: Path, **manifest_extra: object) -> Path:
    (root / "prompts").mkdir(parents=True)
    for i, text in enumerate(prompt_suite(3)):
        (root / "prompts" / f"{i:02d}-ask.md").write_text(text + "\n")
    (root / "system.md").write_text(system_prompt(5_000))
    (root / "terms.txt").write_text(context_document())
    (root / "tools.json").write_text(json.dumps(tool_schemas(2)))
    lines = [
        'slug = "support-agent"',
        'name = "Support agent"',
        'system_prompt_file = "system.md"',
        'prompts_dir = "prompts"',
        'context_file = "terms.txt"',
        "context_tokens = 2000",
        'tools_file = "tools.json"',
        'reasoning_effort = "low"',
        "max_output_tokens = 512",
        "repetitions = 3",
    ]
    lines = [line for line in lines if line.split(" =")[0] not in manifest_extra]
    lines += [f"{key} = {json.dumps(value)}" for key, value in manifest_extra.items()]
    (root / "workload.toml").write_text("\n".join(lines) + "\n")
    return root


def with_permission(user: User) -> User:
    user.user_permissions.add(Permission.objects.get(codename="view_prompt_text"))
    return User.objects.get(pk=user.pk)  # permissions are cached per instance


def custom(**changes) -> Workload:
    fields = {
        "slug": "support-agent",
        "name": "Support agent",
        "system_prompt": system_prompt(2_000),
        "prompt_suite": prompt_suite(3),
        "tools": tool_schemas(2),
    }
    workload = Workload(**{**fields, **changes})
    workload.full_clean()
    workload.save()
    return workload


def test_it_imports_a_workload_folder_and_updates_it_on_the_next_import(tmp_path, capsys):
    folder = write_folder(tmp_path / "wl")
    call_command("import_workload", str(folder))
    workload = Workload.objects.get(slug="support-agent")
    assert workload.prompt_suite == prompt_suite(3)  # the files in name order
    assert workload.system_prompt == system_prompt(5_000)
    assert workload.context_document == context_document().strip()
    assert [t["name"] for t in workload.tools] == [t["name"] for t in tool_schemas(2)]
    assert (workload.reasoning_effort, workload.custom, workload.repetitions) == ("low", True, 3)
    out = capsys.readouterr().out
    assert "Created workload support-agent: 3 prompt(s)" in out
    assert TEXT_MARK not in out, "the command printed the workload's text"

    (folder / "prompts" / "03-new.md").write_text("A fourth question about a lost parcel.")
    call_command("import_workload", str(folder / "workload.toml"))
    assert Workload.objects.get(slug="support-agent").prompt_suite[-1].endswith("lost parcel.")
    assert Workload.objects.filter(slug="support-agent").count() == 1


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"context_file": "../secrets.txt"}, "outside the workload's folder"),
        ({"colour": "red"}, "unknown keys colour"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort: 'extreme' is not a reasoning effort"),
    ],
)
def test_it_refuses_a_bad_workload_folder_with_a_reason(tmp_path, extra, says):
    folder = write_folder(tmp_path / "wl")
    manifest = (folder / "workload.toml").read_text()
    for key in extra:
        manifest = "\n".join(
            line for line in manifest.splitlines() if not line.startswith(f"{key} =")
        )
    manifest += "".join(f"\n{key} = {json.dumps(value)}" for key, value in extra.items())
    (folder / "workload.toml").write_text(manifest + "\n")
    with pytest.raises(CommandError, match=says):
        call_command("import_workload", str(folder))
    assert not Workload.objects.filter(slug="support-agent").exists()


def test_it_exits_1_naming_a_reasoning_effort_no_api_takes(tmp_path):
    """`manage.py import_workload` (a CI step) fails loudly on a typo, before any run."""
    folder = write_folder(tmp_path / "wl", reasoning_effort="extreme")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tokspeed.test_settings",
        "DATABASE_URL": worker_database_url(),
    }
    done = subprocess.run(  # noqa: S603 (this interpreter and the repository's manage.py)
        [sys.executable, "manage.py", "import_workload", str(folder)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "support-agent: reasoning_effort: 'extreme' is not a reasoning effort" in done.stderr
    assert "adaptive (Anthropic)" in done.stderr, "the message says what to use instead"
    assert not Workload.objects.filter(slug="support-agent").exists()


@pytest.mark.parametrize("effort", ["", "none", "high", "xhigh", "adaptive", "auto", "4096", "-1"])
def test_it_accepts_every_reasoning_effort_an_adapter_sends(staff, effort):
    body = {"slug": "effort", "name": "Effort", "reasoning_effort": effort}
    response = staff.post("/api/v1/workloads/", body, format="json")
    assert response.status_code == 201, response.content
    assert Workload.objects.get(slug="effort").reasoning_effort == effort


def test_it_says_which_reasoning_efforts_exist_in_the_api(staff):
    response = staff.post(
        "/api/v1/workloads/",
        {"slug": "bad", "name": "Bad", "reasoning_effort": "extreme"},
        format="json",
    )
    assert response.status_code == 400
    [message] = response.json()["reasoning_effort"]
    assert message.startswith("'extreme' is not a reasoning effort any API takes. Use one of:")
    assert "xhigh (OpenAI)" in message and "thinking budget in tokens" in message


def test_it_creates_a_custom_workload_from_the_dashboard_form(client: Client, django_user_model):
    operator = django_user_model.objects.create_user("op", is_staff=True)
    client.force_login(operator)
    form = {
        "name": "Support agent",
        "slug": "support-agent",
        "system_prompt": system_prompt(3_000),
        "suite_text": "\n---\n".join(prompt_suite(3)),
        "tools_json": json.dumps(tool_schemas(6)),
        "context_tokens": "1500",
        "reasoning_effort": "low",
        "max_output_tokens": "600",
        "concurrency": "1",
        "repetitions": "6",
    }
    upload = {"context_upload": _upload("terms.txt", context_document())}
    response = client.post("/workloads/", {**form, **upload})
    assert response.status_code == 302, response.content.decode()[:2000]
    workload = Workload.objects.get(slug="support-agent")
    assert workload.prompt_suite == prompt_suite(3) and len(workload.tools) == 6
    assert workload.context_document == context_document() and workload.custom
    page = client.get("/workloads/").content.decode()
    assert 'data-workload="support-agent"' in page and "/?workload=support-agent" in page
    assert TEXT_MARK not in page, "the workloads list showed a custom workload's text"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tools_json": "[{"}, "tools_json"),
        ({"tools_json": json.dumps([{"description": "no name"}])}, "tools_json"),
        ({"suite_text": "---\n---"}, "suite_text"),
        ({"system_prompt": "x" * 100_001}, "system_prompt"),
        ({"suite_text": "fine\x00"}, "suite_text"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
    ],
)
def test_it_answers_bad_workload_form_fields_with_a_400_naming_them(
    client: Client, django_user_model, change, field
):
    client.force_login(django_user_model.objects.create_user("op", is_staff=True))
    form = {
        "name": "W",
        "slug": "w-1",
        "suite_text": "Hello",
        "context_tokens": "0",
        "max_output_tokens": "100",
        "concurrency": "1",
        "repetitions": "1",
        **change,
    }
    response = client.post("/workloads/", form)
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()
    assert not Workload.objects.filter(slug="w-1").exists()


def test_it_lets_only_operators_create_workloads(client: Client, django_user_model):
    client.force_login(django_user_model.objects.create_user("reader"))
    response = client.post("/workloads/", {"name": "W", "slug": "w", "suite_text": "Hi"})
    assert response.status_code == 403
    assert "New workload" not in client.get("/workloads/").content.decode()


def test_it_shows_a_custom_workloads_text_in_the_api_only_with_the_permission(
    staff, reader, plain_user
):
    created = staff.post(
        "/api/v1/workloads/",
        {
            "slug": "support-agent",
            "name": "Support agent",
            "system_prompt": system_prompt(2_000),
            "prompt_suite": prompt_suite(4),
            "tools": tool_schemas(3),
            "context_document": context_document(),
            "context_tokens": 1000,
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    body = reader.get("/api/v1/workloads/support-agent/").json()
    assert TEXT_MARK not in json.dumps(body), "a reader without the permission got the text"
    assert body["shape"] == {
        "custom": True,
        "prompts": 4,
        "system_prompt_chars": 2_000,
        "context": "document",
        "context_tokens": 1000,
        "tools": 3,
        "reasoning_effort": "",
        "max_output_tokens": 2048,
    }
    listing = reader.get("/api/v1/workloads/").content.decode()
    assert TEXT_MARK not in listing and STANDARD_PROMPT[:40] in listing  # standard stays open
    reader.force_authenticate(with_permission(plain_user))
    allowed = reader.get("/api/v1/workloads/support-agent/").json()
    assert allowed["prompt_suite"] == prompt_suite(4)
    assert allowed["system_prompt"] == system_prompt(2_000)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tools", [{"name": "a"}, {"name": "a"}]),
        ("tools", [{"name": "a", "parameters": "not a schema"}]),
        ("tools", [{"name": "a", "description": "nul \x00"}]),
        ("prompt_suite", ["ok", 3]),
        ("prompt_suite", "one string"),
        ("system_prompt", "y" * 100_001),
        ("system_prompt", "nul \x00"),
        ("reasoning_effort", "extreme"),
        ("reasoning_effort", "High"),
    ],
)
def test_it_answers_a_bad_workload_in_the_api_with_a_400(staff, field, value):
    response = staff.post(
        "/api/v1/workloads/", {"slug": "bad", "name": "Bad", field: value}, format="json"
    )
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not Workload.objects.filter(slug="bad").exists()


def test_it_hides_a_custom_workloads_text_in_the_admin_without_the_permission(
    client: Client, django_user_model
):
    workload = custom()
    admin = django_user_model.objects.create_user("adm", is_staff=True)
    admin.user_permissions.add(*Permission.objects.filter(codename__endswith="_workload"))
    client.force_login(admin)
    page = client.get(f"/admin/benchmarks/workload/{workload.pk}/change/").content.decode()
    assert "id_name" in page and TEXT_MARK not in page and "id_system_prompt" not in page
    client.force_login(with_permission(admin))
    page = client.get(f"/admin/benchmarks/workload/{workload.pk}/change/").content.decode()
    assert TEXT_MARK in page and "id_system_prompt" in page


def test_it_keeps_custom_workloads_off_the_shared_boards_defaults():
    base = Workloads.load().base()
    long = Workloads.load().long()
    custom(slug="aaa-agent", context_tokens=0)
    custom(slug="huge-context", context_tokens=200_000, context_document=context_document())
    workloads = Workloads.load()
    assert workloads.base() == base and workloads.long() == long
    assert {"aaa-agent", "huge-context"}.isdisjoint(w.slug for w in workloads.base_context())
    assert workloads.by_slug("huge-context").custom  # its own board: /?workload=huge-context


def _upload(name: str, text: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")
