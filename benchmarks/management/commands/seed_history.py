"""python manage.py seed_history: a year of SYNTHETIC history for demos and benchmarks."""

import os

from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmarks.synthetic import SeedError, SeedReport, seed_history


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Seed synthetic history (providers flagged simulated, named 'Synthetic …'): time-of-day "
        "cycles, noise, occasional errors and a few slowdowns, written straight into Run and "
        "Sample rows. Never mistake it for measurements."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoints", type=_positive, default=10)
        parser.add_argument("--days", type=_positive, default=30)
        parser.add_argument("--workloads", type=_positive, default=4)
        parser.add_argument("--slots", type=_positive, default=3, help="Runs per day (UTC).")
        parser.add_argument("--samples-per-run", type=_positive, default=5)
        parser.add_argument(
            "--seed", type=int, default=1, help="Random seed (same seed, same data)."
        )
        parser.add_argument(
            "--jobs",
            type=_positive,
            default=min(4, os.cpu_count() or 1),
            help="Endpoints seeded at once, in worker processes (PostgreSQL).",
        )
        parser.add_argument(
            "--replace", action="store_true", help="Delete the synthetic endpoints' runs first."
        )

    def handle(self, *args, **options) -> None:
        if options["slots"] > 24 * 60:
            raise CommandError("--slots: at most one run a minute (1440 a day).")

        def progress(done: int, total: int, report: SeedReport) -> None:
            if done == total or done % max(total // 10, 1) == 0:
                self.stdout.write(
                    f"  {done}/{total} endpoints, {report.runs:,} runs, "
                    f"{report.samples:,} samples, {report.seconds:.0f} s"
                )

        try:
            report = seed_history(
                endpoints=options["endpoints"],
                days=options["days"],
                workloads=options["workloads"],
                slots=options["slots"],
                samples_per_run=options["samples_per_run"],
                seed=options["seed"],
                replace=options["replace"],
                jobs=options["jobs"],
                progress=progress,
            )
        except SeedError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Seeded SYNTHETIC history: {report.endpoints} endpoints, {report.runs:,} runs, "
                f"{report.samples:,} samples in {report.seconds:.1f} s."
            )
        )
