"""The monthly report on demand: print it, or (--send) queue and send it to its subscribers
and channels."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from alerts.delivery import outbox
from alerts.monthly import send as monthly
from alerts.monthly.month import Month
from alerts.monthly.report import build


class Command(BaseCommand):
    help = (
        "Print a month's report (default: the last complete month in TIME_ZONE); with --send, "
        "send it to the subscribers and channels of the monthly report that have not had it yet."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--month", default="", help="yyyy-mm (default: the last complete).")
        parser.add_argument("--send", action="store_true", help="Send it through the outbox.")

    def handle(self, *args, month: str = "", send: bool = False, **options) -> None:
        try:
            chosen = Month.parse(month) if month else Month.last_complete()
        except ValueError as error:
            raise CommandError(f"--month: {error}") from error
        if not send:
            self.stdout.write(monthly.plain_text(build(chosen)))
            return
        created = monthly.dispatch_monthly(chosen)
        report = outbox.deliver()
        self.stdout.write(
            f"{chosen.label}: queued for {len(created)} new recipient(s); "
            f"sent {len(report.sent)}, gave up {len(report.failed)}"
        )
