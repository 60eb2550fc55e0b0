"""Build the advisor's run digest again from the runs (all days, or the last --days)."""

import time

from django.core.management.base import BaseCommand
from django.utils import timezone

from advisor.digest import rebuild


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, help="Only the last N days (default: every day).")

    def handle(self, *args, days: int | None = None, **options):
        started = time.perf_counter()
        written = rebuild(days=days, now=timezone.now())
        spent = time.perf_counter() - started
        self.stdout.write(f"advisor digest: {written:,} endpoint-days written in {spent:.1f} s")
