"""manage.py up [--host 127.0.0.1] [--port 8000] [--workers 4] [--no-first-round]"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.test import override_settings

from benchmarks.dispatch import queue_run_now
from benchmarks.finish import CENTRAL_QUEUE
from benchmarks.models import Vantage, Workload
from benchmarks.selectors.scope import resolve_vantage
from providers.models import Endpoint
from tokspeed.launcher import SIMULATOR_PORT, Launcher

FIRST_ROUND_WORKLOAD = "base"


class Command(BaseCommand):
    help = (
        "Run everything on this machine: migrate, register the catalogue and the simulator's "
        "demo endpoints, start the simulator, a central Celery worker and a probe worker, beat "
        "and the web server, queue a first round, print the URL. Ctrl-C stops every process it "
        "started."
    )
    requires_migrations_checks = False  # it migrates

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="Web server address.")
        parser.add_argument(
            "--port",
            type=int,
            default=int(os.environ.get("TOKSPEED_PORT", "8000")),
            help="Web server port (default 8000 or $TOKSPEED_PORT; 0 picks a free one).",
        )
        parser.add_argument(
            "--workers", type=int, default=4, help="Worker processes (runs at once), default 4."
        )
        parser.add_argument(
            "--simulator-port",
            type=int,
            default=int(os.environ.get("TOKSPEED_SIMULATOR_PORT", SIMULATOR_PORT)),
            help=f"Simulator port (default {SIMULATOR_PORT} or the next free one; 0: any).",
        )
        parser.add_argument(
            "--no-first-round", action="store_true", help="Do not queue a round at start."
        )

    def handle(self, *args: object, **options: object) -> None:
        if not 0 <= options["port"] <= 65535:
            raise CommandError(f"--port must be between 0 and 65535, got {options['port']}.")
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1.")
        launcher = Launcher(
            host=options["host"],
            port=options["port"],
            workers=options["workers"],
            first_round=not options["no_first_round"],
            simulator_port=options["simulator_port"],
            mail_dir=Path(settings.VAR_DIR) / "mail",
            out=sys.stdout,
        )
        code = launcher.run(prepare=self.prepare, queue_first_round=self.queue_first_round)
        if code:
            raise CommandError("tokspeed stopped because of the error above.", returncode=code)

    def prepare(self, simulator_url: str) -> list[str]:
        """Migrate, register providers; the central queue, then the vantages' queues."""
        call_command("migrate", interactive=False, verbosity=0)
        call_command("register_providers")
        # The simulator listens on loopback, which registration refuses unless allowed.
        with override_settings(TOKSPEED_ALLOW_PRIVATE_ENDPOINTS=True):
            call_command("register_simulator", url=simulator_url)
        probes = [q for q in Vantage.objects.values_list("queue", flat=True) if q != CENTRAL_QUEUE]
        connection.close()  # SQLite: hold no lock while the children start
        return [CENTRAL_QUEUE, *dict.fromkeys(probes)]

    def queue_first_round(self) -> int:
        """One request per enabled endpoint on the default vantage, so the board fills quickly."""
        workload = Workload.objects.filter(slug=FIRST_ROUND_WORKLOAD).first()
        vantage = resolve_vantage(None)
        if workload is None or vantage is None:
            self.stderr.write("No 'base' workload or no vantage: no first round.")
            return 0
        workload.repetitions = 1  # this round only; the workload itself is unchanged
        endpoints = Endpoint.objects.filter(enabled=True, provider__enabled=True)
        count = 0
        for endpoint in endpoints.select_related("provider"):
            queue_run_now(endpoint=endpoint, workload=workload, vantage=vantage)
            count += 1
        connection.close()
        return count
