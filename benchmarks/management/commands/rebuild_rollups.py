"""python manage.py rebuild_rollups: recount the long windows' rollups from the runs."""

import time

from django.core.management.base import BaseCommand

from benchmarks.rollups import windows
from benchmarks.rollups.write import rebuild


class Command(BaseCommand):
    help = (
        "Recompute every rollup (per endpoint × workload × concurrency × vantage × UTC day and "
        "month × time-of-day bucket: counts, error tallies, quantile sketches) from the runs."
    )

    def handle(self, *args, **options) -> None:
        started = time.perf_counter()
        rows = rebuild()
        rows += windows.refresh(force=True)
        self.stdout.write(
            self.style.SUCCESS(
                f"Rebuilt {rows:,} rollup rows in {time.perf_counter() - started:.1f} s."
            )
        )
