"""manage.py import_workload PATH: create or update a workload from workload.toml + text files.

Prints the workload's shape (sizes and counts), never its text: the output may land in a CI log.
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from benchmarks.confidential import shape
from benchmarks.models import Workload
from benchmarks.workload_files import WorkloadFileError, read_workload_folder


class Command(BaseCommand):
    help = "Create or update a workload from a folder holding workload.toml (docs/workloads.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The folder (or its workload.toml).")

    def handle(self, *args: object, **options: object) -> None:
        try:
            slug, values = read_workload_folder(Path(str(options["path"])))
        except WorkloadFileError as exc:
            raise CommandError(str(exc)) from None
        with transaction.atomic():
            workload = Workload.objects.select_for_update().filter(slug=slug).first()
            created = workload is None
            workload = workload or Workload(slug=slug)
            for name, value in values.items():
                setattr(workload, name, value)
            try:
                workload.full_clean()
            except ValidationError as exc:
                problems = "; ".join(
                    f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items()
                )
                raise CommandError(f"{slug}: {problems}") from None
            workload.save()
        figures = shape(workload)
        self.stdout.write(
            f"{'Created' if created else 'Updated'} workload {slug}: {figures['prompts']} "
            f"prompt(s), system prompt {figures['system_prompt_chars']:,} characters, "
            f"context {figures['context_tokens']:,} tokens of {figures['context']}, "
            f"{figures['tools']} tool(s)."
        )
