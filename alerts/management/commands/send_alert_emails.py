"""Send pending alert emails now (what the every-minute Celery task does)."""

from django.core.management.base import BaseCommand

from alerts.delivery import outbox
from alerts.models import Delivery


class Command(BaseCommand):
    help = "Turn pending alert events into emails and send them (use --digest for the digest)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--digest", action="store_true", help="Send the daily digest too.")

    def handle(self, *args, digest: bool = False, **options) -> None:
        outbox.dispatch(Delivery.IMMEDIATE)
        if digest:
            outbox.dispatch(Delivery.DIGEST)
        report = outbox.deliver()
        self.stdout.write(
            f"sent {len(report.sent)}, gave up {len(report.failed)}"
            + (f", retrying in {report.retry_in_s:.0f} s" if report.retry_in_s else "")
        )
