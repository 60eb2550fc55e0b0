"""python manage.py rebuild_rollups: recount the long windows' rollups from the runs."""

from django.core.management.base import BaseCommand
from django.utils import timezone

from benchmarks.derived import rebuild_all


class Command(BaseCommand):
    help = (
        "Recompute every rollup (per endpoint × workload × concurrency × vantage × UTC day and "
        "month × time-of-day bucket: counts, error tallies, quantile sketches) from the runs. "
        "`rebuild_derived` rebuilds the rollups and every other derived store."
    )

    def handle(self, *args, **options) -> None:
        # The materialized board is merged from the rollups: written again right after them.
        store, _ = rebuild_all(now=timezone.now(), only=["rollups", "board"])
        self.stdout.write(
            self.style.SUCCESS(f"Rebuilt {store.rows:,} rollup rows in {store.seconds:.1f} s.")
        )
