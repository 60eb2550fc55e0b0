"""`manage.py expire_samples`: delete samples past TOKSPEED_SAMPLE_RETENTION_DAYS now."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from benchmarks import retention


class Command(BaseCommand):
    help = (
        "Delete raw samples of runs slotted more than TOKSPEED_SAMPLE_RETENTION_DAYS days ago "
        "(runs, their summaries and rollups are kept). Beat does this daily."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch-size", type=int, default=retention.BATCH_SIZE, help="Rows per DELETE."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        report = retention.expire_samples(now=timezone.now(), batch_size=options["batch_size"])
        if report.cutoff is None:
            self.stdout.write("Retention is off (TOKSPEED_SAMPLE_RETENTION_DAYS=0): kept all.")
            return
        self.stdout.write(
            f"Deleted {report.deleted} samples of runs slotted before "
            f"{report.cutoff.isoformat(timespec='seconds')} in {report.batches} batches."
        )
        if report.dropped_partitions:
            dropped = ", ".join(report.dropped_partitions)
            self.stdout.write(f"Dropped whole months of samples: {dropped}.")
