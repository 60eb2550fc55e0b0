"""python manage.py rebuild_derived: build every store derived from the runs again."""

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from benchmarks.derived import rebuild_all, registered


class Command(BaseCommand):
    help = (
        "Rebuild what is derived from the runs (benchmarks.derived's registry: the rollups, the "
        "advisor digest, …) after seeding, restoring or editing runs by hand."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        names = ", ".join(store.name for store in registered())
        parser.add_argument(
            "--only", action="append", metavar="NAME", help=f"Only this store (of: {names})."
        )

    def handle(self, *args, only: list[str] | None = None, **options) -> None:
        try:
            done = rebuild_all(now=timezone.now(), only=only)
        except KeyError as exc:
            raise CommandError(exc.args[0]) from exc
        for store in done:
            self.stdout.write(
                self.style.SUCCESS(
                    f"{store.name}: {store.rows:,} rows rebuilt in {store.seconds:.1f} s"
                )
            )
