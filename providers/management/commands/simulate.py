"""`manage.py simulate`: the reference simulator of LLM providers (labelled simulated)."""

from __future__ import annotations

import asyncio
import os

from django.core.management.base import BaseCommand, CommandError, CommandParser

from providers.simulator.runner import serve


class Command(BaseCommand):
    help = (
        "Serve simulated LLM providers (OpenAI chat + responses, Anthropic, Gemini protocols) "
        "with known timings and faults. Prints its listening line once bound."
    )
    # The simulator needs neither the database nor the system checks; it must start anywhere.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, required=True, help="TCP port; 0 picks a free one")
        parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
        parser.add_argument(
            "--api-key",
            default=None,
            help="require this key (default: env TOKSPEED_SIM_API_KEY, else accept any key)",
        )

    def handle(self, *args: object, **options: object) -> None:
        port = options["port"]
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise CommandError(f"--port must be between 0 and 65535, got {port}")
        api_key = options["api_key"] or os.environ.get("TOKSPEED_SIM_API_KEY") or None

        def announce(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()  # the parent process waits for this line to learn the port

        try:
            asyncio.run(
                serve(host=str(options["host"]), port=port, api_key=api_key, announce=announce)
            )
        except OSError as exc:
            raise CommandError(f"cannot listen on {options['host']}:{port}: {exc}") from exc
        except KeyboardInterrupt:
            pass
