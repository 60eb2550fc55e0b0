"""manage.py speedtest ENDPOINT | --base-url URL --protocol P --model M [--api-key-env VAR]

Streams the standard prompt (docs/design.md §3) --repeat rounds of --concurrency requests at once,
prints one row per request plus the medians, or with --json one object
{"samples": [...], "summary": {...}} keyed by the field names of docs/design.md §4.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchmarks.clients import network_for
from benchmarks.measure import Limits, Measurement, make_client, measure_burst
from benchmarks.measure.timing import WITHHELD_ALL, WITHHELD_TAIL
from benchmarks.prompts import build_prompt
from benchmarks.stats import median, summarize
from providers.base import EndpointConfig
from providers.config import MissingKey, adhoc_config, endpoint_config
from providers.models import Endpoint, Protocol
from providers.validators import PRIVATE_HINT

COLUMNS = (
    ("#", 4),
    ("TTFT ms", 9),
    ("TTFA ms", 9),
    ("tok/s", 8),
    ("tokens", 7),
    ("src", 8),
    ("ITL p50", 8),
    ("ITL p99", 8),
    ("e2e ms", 9),
)


def bounded_int(low: int, high: int):  # noqa: ANN201 - an argparse type factory
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not between {low} and {high}")
        return value

    return parse


class OneLineParser(CommandParser):
    """Bad flags: one line on stderr and exit status 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if self.called_from_command_line:
            self.exit(2, f"{self.prog}: error: {message}\n")
        raise CommandError(f"Error: {message}")


class _Writer:
    """Lets rich write through Django's OutputWrapper without extra newlines."""

    def __init__(self, wrapper: Any) -> None:
        self.wrapper = wrapper

    def write(self, text: str) -> int:
        self.wrapper.write(text, ending="")
        return len(text)

    def flush(self) -> None:
        self.wrapper.flush()

    def isatty(self) -> bool:
        return self.wrapper.isatty()


class Command(BaseCommand):
    help = "Measure an endpoint's TTFT, decode speed and inter-token latency, right now."
    requires_system_checks: list[str] = []

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.__class__ = OneLineParser  # same state, one-line errors (Django has no hook)
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("endpoint", nargs="?", help="Slug of a registered endpoint.")
        parser.add_argument("--base-url", help="Ad hoc: the provider's base URL.")
        parser.add_argument("--protocol", choices=Protocol.values, help="Ad hoc: wire protocol.")
        parser.add_argument("--model", help="Ad hoc: model id.")
        parser.add_argument(
            "--api-key-env", default="", help="Ad hoc: NAME of the variable holding the key."
        )
        parser.add_argument("--concurrency", type=bounded_int(1, 1024), default=1)
        parser.add_argument("--repeat", type=bounded_int(1, 1000), default=5, help="Rounds.")
        parser.add_argument(
            "--context-tokens",
            type=bounded_int(0, 2_000_000),
            default=0,
            help="Neutral text pasted above the prompt, in tokens (prefill cost).",
        )
        parser.add_argument("--max-tokens", type=bounded_int(1, 1_000_000), default=2048)
        parser.add_argument(
            "--cold",
            action="store_true",
            help="Open each request's connection inside its TTFT (default: before the round).",
        )
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")

    def handle(self, *args: Any, **options: Any) -> None:
        config, label, simulated = self._target(options)
        as_json = options["json"]
        report = _Report(
            Console(file=_Writer(self.stdout), highlight=False, soft_wrap=True),
            label=label,
            simulated=simulated,
            quiet=as_json,
            concurrency=options["concurrency"],
        )
        samples, rounds = asyncio.run(self._measure(config, options, report))
        if not as_json and not any(m.ok for m in samples) and rounds == 1:
            # Nothing came back at all (a dead host, a wrong key): one line, no empty table.
            raise CommandError(_all_failed(samples))
        summary = summarize(samples, concurrency=options["concurrency"])
        summary.update(
            endpoint=label,
            protocol=config.protocol,
            model=config.model,
            simulated=report.simulated,
            concurrency=options["concurrency"],
            repeat=rounds,
            repeat_requested=options["repeat"],
            max_tokens=options["max_tokens"],
            context_tokens=options["context_tokens"],
        )
        if as_json:
            payload = {"samples": [m.as_dict() for m in samples], "summary": summary}
            self.stdout.write(json.dumps(payload))
        else:
            report.summary(summary)
        if not summary["ok"]:
            raise CommandError(_all_failed(samples))

    async def _measure(
        self, config: EndpointConfig, options: dict[str, Any], report: _Report
    ) -> tuple[list[Measurement], int]:
        """The samples, and how many rounds ran (fewer than asked when one failed entirely)."""
        concurrency, repeat = options["concurrency"], options["repeat"]
        limits = Limits.from_settings()
        samples: list[Measurement] = []
        with report.progress:
            task = report.progress.add_task("streaming", total=concurrency * repeat)
            async with make_client(
                limits=limits, max_connections=concurrency, network=self._network
            ) as client:
                for number in range(repeat):
                    prompts = [
                        build_prompt(context_tokens=options["context_tokens"])
                        for _ in range(concurrency)
                    ]
                    burst = await measure_burst(
                        client,
                        config,
                        prompts=prompts,
                        max_tokens=options["max_tokens"],
                        limits=limits,
                        cold=options["cold"],
                        # Cheap on purpose: it runs in the event loop while others stream.
                        on_done=lambda _i, _m: report.progress.advance(task),
                    )
                    samples.extend(burst.samples)
                    failed = not any(m.ok for m in burst.samples)
                    if failed and number == 0:
                        return samples, 1  # handle() says it in one line
                    report.round_done(number, burst.samples, config, options)
                    if failed:
                        # A wrong key or a dead host will not fix itself next round.
                        report.stopped(number + 1, repeat)
                        return samples, number + 1
        return samples, repeat

    def _target(self, options: dict[str, Any]) -> tuple[EndpointConfig, str, bool]:
        adhoc = [options[name] for name in ("base_url", "protocol", "model")]
        if options["endpoint"]:
            if any(adhoc) or options["api_key_env"]:
                raise CommandError(
                    "Give either an endpoint slug or --base-url/--protocol/--model, not both."
                )
            try:
                endpoint = Endpoint.objects.select_related("provider").get(slug=options["endpoint"])
            except Endpoint.DoesNotExist:
                raise CommandError(
                    f"Unknown endpoint {options['endpoint']!r} (see the admin or "
                    "register_providers)."
                ) from None
            try:
                config = endpoint_config(endpoint)
            except MissingKey as exc:
                raise CommandError(str(exc)) from None
            self._network = network_for(endpoint.provider)
            return config, endpoint.label, endpoint.provider.simulated
        if not all(adhoc):
            raise CommandError(
                "Give an endpoint slug, or all of --base-url, --protocol and --model."
            )
        try:
            config = adhoc_config(
                base_url=options["base_url"],
                protocol=options["protocol"],
                model=options["model"],
                api_key_env=options["api_key_env"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        except MissingKey as exc:
            raise CommandError(str(exc)) from None
        self._network = network_for(None)
        return config, f"{config.model} @ {config.base_url}", False


def _all_failed(samples: list[Measurement]) -> str:
    """One line: how many requests failed (all of them) and the first one's error."""
    first = next(m for m in samples if not m.ok)
    how_many = "the only request" if len(samples) == 1 else f"all {len(samples)} requests"
    line = f"{how_many} failed; first: {first.error_category}: {first.error_message}"
    if "private or loopback address" in first.error_message:
        line += f" ({PRIVATE_HINT}, as `make run` does)"
    return line


def _fmt(value: float | int | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _cells(values: tuple[str, ...]) -> str:
    return " ".join(v.rjust(width) for v, (_, width) in zip(values, COLUMNS, strict=True))


class _Report:
    """The human-readable output: a progress bar, a header, one row per request, medians."""

    def __init__(
        self, console: Console, *, label: str, simulated: bool, quiet: bool, concurrency: int
    ) -> None:
        self.console = console
        self.label = label
        self.simulated = simulated
        self.quiet = quiet
        self.concurrency = concurrency
        self._header_done = False
        # With --json, stdout carries the JSON alone: progress goes to stderr. A bar only
        # makes sense on a terminal.
        progress_console = Console(stderr=True) if quiet else console
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=progress_console,
            transient=True,
            refresh_per_second=4,
            disable=not progress_console.is_terminal,
        )

    def round_done(
        self,
        number: int,
        samples: list[Measurement],
        config: EndpointConfig,
        options: dict[str, Any],
    ) -> None:
        # An ad hoc URL may turn out to be tokspeed's simulator: it says so in a header.
        self.simulated = self.simulated or any(m.simulated for m in samples)
        if self.quiet:
            return
        out = self.progress.console
        if not self._header_done:
            self._header_done = True
            # A simulated provider's name often says so already ("Simulated Anthropic").
            mark = (
                " (simulated)" if self.simulated and "simulated" not in self.label.lower() else ""
            )
            out.print(
                f"speedtest · {self.label}{mark} · {config.protocol} · concurrency "
                f"{self.concurrency} × {options['repeat']} rounds · max tokens "
                f"{options['max_tokens']} · context {options['context_tokens']} tokens"
            )
            out.print(_cells(tuple(name for name, _ in COLUMNS)) + "  error")
        first = number * self.concurrency + 1
        for offset, m in enumerate(samples):
            out.print(_row(str(first + offset), m))

    def stopped(self, rounds: int, requested: int) -> None:
        if not self.quiet:
            self.progress.console.print(
                f"stopped after round {rounds} of {requested}: every request in it failed"
            )

    def summary(self, summary: dict[str, Any]) -> None:
        medians = (
            "median",
            _fmt(median(summary, "ttft_ms")),
            _fmt(median(summary, "ttfa_ms")),
            _fmt(median(summary, "decode_tps")),
            _fmt(median(summary, "output_tokens")),
            "",
            _fmt(median(summary, "itl_p50_ms"), 2),
            _fmt(median(summary, "itl_p99_ms"), 2),
            _fmt(median(summary, "e2e_ms")),
        )
        self.console.print(_cells(medians))
        errors = ", ".join(f"{k} {v}" for k, v in summary["errors_by_category"].items())
        self.console.print(
            f"ok {summary['ok']}/{summary['samples']} · errors: {errors or 'none'} · aggregate "
            f"throughput {_fmt(summary['throughput_tps'])} tok/s (all ok requests together, "
            "not per user)"
        )
        if summary["saturated"]:
            self.console.print(
                saturation_note(summary["saturated"], summary["ok"], self.concurrency)
            )
        tails = summary["itl_withheld"].get(WITHHELD_TAIL, 0)
        if tails:
            self.console.print(
                f"ITL tail withheld in {tails} of {summary['ok']} requests: events arrived "
                "together after a silence, so how long their longest gap was is unknown (max, "
                "and p99 where it shows 'burst')"
            )


def saturation_note(saturated: int, ok: int, concurrency: int) -> str:
    """One line saying the client, not the provider, set the pace of some requests."""
    return (
        f"client saturated in {saturated} of {ok} requests: this machine read slower than the "
        f"provider wrote at concurrency {concurrency}, so their ITL is withheld where it cannot "
        "be known ('sat.') and their decode may read low; measure at a lower --concurrency or give "
        "the client more CPU (manage.py speedtest --find-saturation tells where this machine "
        "falls behind)"
    )


def _itl_cell(m: Measurement, value: float | None) -> str:
    """An ITL figure, or why it is withheld: "sat." (the client fell behind: not even the median
    is known) or "burst" (a burst may hide the longest gap)."""
    if value is None and m.itl_withheld:
        return "sat." if m.itl_withheld == WITHHELD_ALL else "burst"
    return _fmt(value, 2)


def _row(label: str, m: Measurement) -> str:
    values = (
        label,
        _fmt(m.ttft_ms),
        _fmt(m.ttfa_ms),
        _fmt(m.decode_tps),
        _fmt(m.output_tokens),
        m.tokens_source or "-",
        _itl_cell(m, m.itl_p50_ms),
        _itl_cell(m, m.itl_p99_ms),
        _fmt(m.e2e_ms),
    )
    error = f"{m.error_category}: {m.error_message}" if m.error_category else ""
    if m.outcome:
        error = f"({m.outcome}) {error}".strip()
    return f"{_cells(values)}  {error[:100]}"
