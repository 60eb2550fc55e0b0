"""The dashboard's form for a team's own workload (docs/workloads.md)."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from benchmarks.models import Workload
from benchmarks.validators import validate_prompt_suite, validate_tools

SUITE_SEPARATOR = "---"
MAX_UPLOAD_BYTES = 4 * 1024 * 1024


class WorkloadForm(forms.ModelForm):
    """Prompts are typed one after another, separated by a line holding only `---`; the
    context document is pasted or uploaded (UTF-8 text); tools are a JSON array."""

    suite_text = forms.CharField(
        label="Prompts",
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text=f"One or more prompts, separated by a line holding only {SUITE_SEPARATOR}.",
    )
    tools_json = forms.CharField(
        label="Tools (JSON)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text='[{"name": "...", "description": "...", "parameters": {JSON Schema}}]',
    )
    context_upload = forms.FileField(
        label="Or upload the context document", required=False, help_text="UTF-8 text, ≤ 4 MiB."
    )

    class Meta:
        model = Workload
        fields = [
            "name",
            "slug",
            "system_prompt",
            "context_document",
            "context_tokens",
            "reasoning_effort",
            "max_output_tokens",
            "concurrency",
            "repetitions",
        ]
        widgets = {
            "system_prompt": forms.Textarea(attrs={"rows": 6}),
            "context_document": forms.Textarea(attrs={"rows": 4}),
        }

    def clean_suite_text(self) -> list[str]:
        text = self.cleaned_data["suite_text"].replace("\r\n", "\n")
        prompts, current = [], []
        for line in text.split("\n"):
            if line.strip() == SUITE_SEPARATOR:
                prompts.append("\n".join(current).strip())
                current = []
            else:
                current.append(line)
        prompts.append("\n".join(current).strip())
        prompts = [p for p in prompts if p]
        if not prompts:
            raise forms.ValidationError("Give at least one prompt.")
        validate_prompt_suite(prompts)  # not a form field of the model: checked here
        return prompts

    def clean_tools_json(self) -> list[Any]:
        text = self.cleaned_data["tools_json"].strip()
        if not text:
            return []
        try:
            tools = json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.args[0]}") from None
        if not isinstance(tools, list):
            raise forms.ValidationError("Give a JSON array of tools.")
        validate_tools(tools)
        return tools

    def clean_context_upload(self) -> str | None:
        upload = self.cleaned_data.get("context_upload")
        if not upload:
            return None
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError("The document is over 4 MiB.")
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            raise forms.ValidationError("The document is not UTF-8 text.") from None
        if "\x00" in text:
            raise forms.ValidationError("The document contains NUL characters.")
        return text

    def _post_clean(self) -> None:
        # Before the model's own validation: the suite, tools and upload become its fields.
        data = self.cleaned_data
        if "suite_text" in data:
            self.instance.prompt_suite = data["suite_text"]
            self.instance.prompt = data["suite_text"][0]
        if "tools_json" in data:
            self.instance.tools = data["tools_json"]
        if data.get("context_upload"):
            data["context_document"] = data["context_upload"]
        super()._post_clean()
