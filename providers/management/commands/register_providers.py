"""manage.py register_providers [--local-url vllm=http://host:8000/v1] [--local-model vllm=M]"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from providers.registration import (
    LOCAL_BY_SLUG,
    Registered,
    register_cloud,
    register_hosted,
    register_local,
)
from providers.validators import validate_base_url


def _pairs(values: list[str], flag: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        name = name.strip().lower()
        if not sep or not rest.strip():
            raise CommandError(f"{flag} expects NAME=VALUE, got {value!r}.")
        if name not in LOCAL_BY_SLUG:
            raise CommandError(
                f"{flag}: unknown local server {name!r}; choose from {', '.join(LOCAL_BY_SLUG)}."
            )
        out.setdefault(name, []).append(rest.strip())
    return out


class Command(BaseCommand):
    help = (
        "Register the known providers (catalogue), enabled where their API key variable is set; "
        "local servers (vllm, sglang, llamacpp, ollama) when given --local-url NAME=URL."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--local-url",
            action="append",
            default=[],
            metavar="NAME=URL",
            help="Base URL of a local server, e.g. vllm=http://127.0.0.1:8000/v1 (repeatable).",
        )
        parser.add_argument(
            "--local-model",
            action="append",
            default=[],
            metavar="NAME=MODEL",
            help="Model served by a local server (default: ask its /models).",
        )

    def handle(self, *args: object, **options: object) -> None:
        urls = _pairs(options["local_url"], "--local-url")
        models = _pairs(options["local_model"], "--local-model")
        for name in models.keys() - urls.keys():
            raise CommandError(f"--local-model {name}=... needs --local-url {name}=URL too.")
        # Check every flag before registering anything, so a typo changes nothing.
        for name, (url, *extra) in urls.items():
            if extra:
                raise CommandError(f"--local-url given twice for {name}.")
            try:
                validate_base_url(url)
            except ValidationError as exc:
                raise CommandError(f"--local-url {name}: {' '.join(exc.messages)}") from None
        result = Registered()
        register_hosted(result)
        register_cloud(result)
        for name, (url, *_) in urls.items():
            register_local(LOCAL_BY_SLUG[name], url, models.get(name, []), result)
        self._report(result)

    def _report(self, result: Registered) -> None:
        out = self.stdout
        names = ", ".join(p.name for p in result.enabled) or "none"
        out.write(self.style.SUCCESS(f"Enabled: {names}"))
        if result.disabled:
            out.write("Disabled until their key variable is set:")
            for provider in result.disabled:
                out.write(f"  {provider.name}: set {provider.api_key_env}")
        out.write(f"Endpoints created: {result.endpoints_created} (prices are 2025 list prices).")
        for note in result.notes:
            out.write(self.style.WARNING(note))
