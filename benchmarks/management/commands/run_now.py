"""manage.py run_now [--endpoint SLUG] [--workload SLUG] [--vantage SLUG] [--repeat N] [--wait]"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchmarks.dispatch import queue_run_now
from benchmarks.models import Run, RunStatus, Vantage, Workload
from benchmarks.selectors.scope import resolve_vantage
from providers.models import Endpoint


def _fmt(value: float | None, unit: str, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f} {unit}"


def describe(run: Run) -> str:
    """One line a person reads: what ran, its status, and the §4 medians side by side."""
    head = f"run {run.id} · {run.endpoint} · {run.workload.slug} · {run.vantage.slug}: {run.status}"
    if run.status == RunStatus.SKIPPED:
        return f"{head} ({run.failure_reason})"
    figures = (
        f"TTFT p50 {_fmt(run.ttft_p50_ms, 'ms')}"
        f" · decode p50 {_fmt(run.decode_tps_p50, 'tok/s', 1)}"
        f" · e2e p50 {_fmt(run.e2e_p50_ms and run.e2e_p50_ms / 1000, 's', 2)}"
        f" · output p50 {_fmt(run.output_tokens_p50, 'tokens')}"
        f" · aggregate {_fmt(run.throughput_tps, 'tok/s', 1)}"
        f" · {run.ok_count} ok / {run.error_count} errors"
    )
    if run.saturated_count:  # docs/design.md §4: decode may read low, ITL withheld where unknown
        figures += f" · client saturated in {run.saturated_count} of {run.ok_count} requests"
    reason = f"\n    {run.failure_reason}" if run.failure_reason else ""
    return f"{head}\n    {figures}{reason}"


class Command(BaseCommand):
    help = (
        "Queue a run at once (slot = now) on the vantage's queue. Without --endpoint: every "
        "enabled endpoint. With --wait: show progress, print the summaries, and exit 1 when a "
        "run failed, was skipped or had errors."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoint", action="append", help="Endpoint slug (repeatable).")
        parser.add_argument("--workload", default="base", help="Workload slug (default: base).")
        parser.add_argument("--vantage", help="Vantage slug (default: the default vantage).")
        parser.add_argument(
            "--repetitions", type=int, help="Override the workload's rounds for these runs."
        )
        parser.add_argument(
            "--repeat",
            type=int,
            default=1,
            help="Runs per endpoint (default 1); they run one after another, never skipped.",
        )
        parser.add_argument("--wait", action="store_true", help="Wait and print the summaries.")
        parser.add_argument(
            "--timeout", type=float, default=3600.0, help="Seconds --wait waits (default 3600)."
        )

    def handle(self, *args: object, **options: object) -> None:
        workload = self._workload(options["workload"])
        vantage = self._vantage(options["vantage"])
        endpoints = self._endpoints(options["endpoint"])
        if options["repetitions"] is not None:
            if options["repetitions"] < 1:
                raise CommandError("--repetitions must be at least 1.")
            workload.repetitions = options["repetitions"]  # this call only; not saved
        if options["repeat"] < 1:
            raise CommandError("--repeat must be at least 1.")
        runs = [
            queue_run_now(endpoint=endpoint, workload=workload, vantage=vantage)
            for _ in range(options["repeat"])
            for endpoint in endpoints
        ]
        self.stdout.write(
            f"Queued {len(runs)} run(s) of '{workload.slug}' on queue '{vantage.queue}': "
            + ", ".join(str(run.id) for run in runs)
        )
        if options["wait"]:
            self._wait([run.id for run in runs], timeout=options["timeout"])

    def _wait(self, run_ids: list[int], *, timeout: float) -> None:
        """Show samples done / expected per run while waiting; fail when a run did not go well."""
        deadline = time.monotonic() + timeout
        runs = {
            run.id: run
            for run in Run.objects.select_related("endpoint__provider").filter(id__in=run_ids)
        }
        pending = set(run_ids)
        ended: list[Run] = []
        progress = Progress(
            TextColumn("run {task.fields[run_id]} {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("samples"),
            TimeElapsedColumn(),
            console=Console(file=self.stdout, highlight=False),
        )
        with progress:
            tasks = {
                run_id: progress.add_task(
                    str(runs[run_id].endpoint),
                    total=runs[run_id].expected_samples,
                    run_id=run_id,
                )
                for run_id in run_ids
            }
            while pending:
                done = dict(
                    Run.objects.filter(id__in=pending)
                    .annotate(done=Count("samples"))
                    .values_list("id", "done")
                )
                for run_id, count in done.items():
                    progress.update(tasks[run_id], completed=count)
                for run in Run.objects.filter(id__in=pending, status__in=Run.ENDED).select_related(
                    "endpoint__provider", "workload", "vantage"
                ):
                    progress.update(tasks[run.id], completed=run.ok_count + run.error_count)
                    ended.append(run)
                    pending.discard(run.id)
                if pending and time.monotonic() > deadline:
                    raise CommandError(
                        f"{len(pending)} run(s) still not finished after {timeout:g} s "
                        f"(is a worker consuming the queue?): {sorted(pending)}"
                    )
                if pending:
                    time.sleep(0.5)
        for run in ended:
            self.stdout.write(describe(run))
        bad = [run for run in ended if run.status != RunStatus.DONE or run.error_count]
        if bad:
            raise CommandError(
                f"{len(bad)} of {len(ended)} run(s) failed, were skipped or had errors: "
                + ", ".join(f"run {run.id} {run.status}" for run in bad)
            )

    def _workload(self, slug: str) -> Workload:
        try:
            return Workload.objects.get(slug=slug)
        except Workload.DoesNotExist:
            known = ", ".join(Workload.objects.values_list("slug", flat=True)) or "none"
            raise CommandError(f"No workload '{slug}'. Known: {known}.") from None

    def _vantage(self, slug: str | None) -> Vantage:
        vantage = resolve_vantage(slug)
        if vantage is None:
            known = ", ".join(Vantage.objects.values_list("slug", flat=True)) or "none"
            raise CommandError(f"No vantage '{slug}'. Known: {known}.")
        return vantage

    def _endpoints(self, slugs: list[str] | None) -> list[Endpoint]:
        endpoints = Endpoint.objects.select_related("provider")
        if not slugs:
            chosen = list(endpoints.filter(enabled=True, provider__enabled=True))
            if not chosen:
                raise CommandError("No enabled endpoint: register one (register_providers).")
            return chosen
        found = {e.slug: e for e in endpoints.filter(slug__in=slugs)}
        unknown = [slug for slug in slugs if slug not in found]
        if unknown:
            raise CommandError(f"No endpoint with slug: {', '.join(unknown)}.")
        return [found[slug] for slug in slugs]
