"""manage.py register_simulator --url http://127.0.0.1:P [--api-key-env VAR]"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from providers.models import validate_env_name
from providers.registration import register_simulator


class Command(BaseCommand):
    help = (
        "Register simulated demo providers (all four protocols, one endpoint per simulator "
        "profile) pointing at a running `manage.py simulate`. They are labelled simulated."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url", required=True, help="The simulator, e.g. http://127.0.0.1:9100"
        )
        parser.add_argument(
            "--api-key-env",
            default="",
            help="Variable holding the key the simulator was started with (--api-key), if any.",
        )

    def handle(self, *args: object, **options: str) -> None:
        try:
            validate_env_name(options["api_key_env"])
            result = register_simulator(options["url"], api_key_env=options["api_key_env"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        for provider in result.enabled:
            self.stdout.write(f"{provider} -> {provider.base_url}")
        self.stdout.write(
            self.style.SUCCESS(
                f"Registered {len(result.enabled)} simulated providers, "
                f"{result.endpoints_created} new endpoints (prices are simulated)."
            )
        )
