"""Ending a run: its summary from the stored samples, its final status, then alert evaluation."""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial

from django.db import transaction
from django.utils import timezone

from providers.lanes import is_downgrade
from tokspeed.celery import app as celery_app

from .buckets import tod_bucket
from .models import Run, RunStatus
from .prompts import prompt_tokens_estimate
from .resilience import retry_db
from .rollups import write as rollups
from .stats import all_requests, median, per_prompt, summarize

log = logging.getLogger(__name__)

EVALUATE_AFTER_RUN = "alerts.evaluate_after_run"
DIGEST_RUN = "advisor.digest_run"  # the advisor's compact copy of finished runs
CENTRAL_QUEUE = "tokspeed"


def decide(run: Run, summary: dict) -> tuple[str, str]:
    """(status, reason): done when every expected sample is ok, failed when none is."""
    expected, stored, ok = run.expected_samples, summary["samples"], summary["ok"]
    categories = ", ".join(f"{n} × {c}" for c, n in summary["errors_by_category"].items())
    if ok == 0:
        if stored == 0:
            return RunStatus.FAILED, "No request completed."
        return RunStatus.FAILED, f"{all_requests(stored)} failed ({categories})."
    if summary["errors"]:
        return RunStatus.PARTIAL, f"{summary['errors']} of {stored} requests failed ({categories})."
    if stored < expected:
        return RunStatus.PARTIAL, f"Only {stored} of {expected} requests were measured."
    return RunStatus.DONE, ""


def input_tokens_sent(run: Run, summary: dict) -> tuple[int, str]:
    """Prompt tokens per request: the provider's usage median, else the ~4 chars/token estimate."""
    reported = median(summary, "input_tokens")
    if reported is not None:
        return round(reported), "usage"
    estimate = prompt_tokens_estimate(prompt=run.workload.prompt, context_tokens=run.context_tokens)
    return estimate, "estimate"


def lane_served(run: Run, samples: list) -> tuple[str, dict[str, int]]:
    """(the lane asked, {lane served below it: requests}) of a run's ok samples."""
    asked = run.endpoint.lane
    below: dict[str, int] = {}
    for sample in samples:
        if not sample.error_category and is_downgrade(asked, sample.served_lane):
            below[sample.served_lane] = below.get(sample.served_lane, 0) + 1
    return asked, below


def finish_run(
    run: Run,
    *,
    status: str | None = None,
    reason: str = "",
    attempt: int | None = None,
    only_if_heartbeat_before: datetime | None = None,
) -> bool:
    """Write the summary and final status of a running run; False if it was not ours to end.

    `attempt` fences a worker that lost its lease (another took the run over); the heartbeat
    condition lets the tick fail a silent run without racing a worker that just resumed it.
    Alert evaluation is requested on commit, on the central queue. A database that goes away
    meanwhile is waited for (benchmarks/resilience.py): the summary is recomputed from the
    stored samples and written by a conditional UPDATE, so a retry never ends a run twice.
    """
    return retry_db(
        partial(
            _finish_once,
            run,
            status=status,
            reason=reason,
            attempt=attempt,
            only_if_heartbeat_before=only_if_heartbeat_before,
        ),
        what=f"finishing run {run.id}",
    )


def _finish_once(
    run: Run,
    *,
    status: str | None,
    reason: str,
    attempt: int | None,
    only_if_heartbeat_before: datetime | None,
) -> bool:
    samples = list(run.samples.order_by("index"))
    summary = summarize(samples, concurrency=run.concurrency)
    input_tokens, source = input_tokens_sent(run, summary)
    bucket = tod_bucket(run.started_at or run.slot)  # when it was measured, not when it was due
    summary.update(
        tod_bucket=bucket,
        input_tokens_sent=input_tokens,
        input_tokens_source=source,
        concurrency=run.concurrency,
        repetitions=run.repetitions,
        client_version=run.client_version,
    )
    prompts = per_prompt(samples)
    if prompts:
        summary["prompts"] = prompts
    lane, downgraded = lane_served(run, samples)
    if downgraded:
        summary["downgraded"] = downgraded
    decided, why = decide(run, summary)
    fields = {
        "status": status or decided,
        "failure_reason": reason or why,
        "finished_at": timezone.now(),
        "heartbeat_at": timezone.now(),
        "tod_bucket": bucket,
        "input_tokens": input_tokens,
        "ok_count": summary["ok"],
        "error_count": summary["errors"],
        "ttft_p50_ms": median(summary, "ttft_ms"),
        "ttfa_p50_ms": median(summary, "ttfa_ms"),
        "decode_tps_p50": median(summary, "decode_tps"),
        "e2e_p50_ms": median(summary, "total_ms"),
        "output_tokens_p50": median(summary, "output_tokens"),
        "throughput_tps": summary["throughput_tps"],
        "saturated_count": summary["saturated"],
        "summary": summary,
        "lane": lane,
        "downgraded": bool(downgraded),
    }
    mine = Run.objects.filter(id=run.id, status=RunStatus.RUNNING)
    if attempt is not None:
        mine = mine.filter(attempts=attempt)
    if only_if_heartbeat_before is not None:
        mine = mine.filter(heartbeat_at__lt=only_if_heartbeat_before)
    with transaction.atomic():
        if not mine.update(**fields):
            return False
        transaction.on_commit(partial(request_evaluation, run.id))
        transaction.on_commit(partial(request_digest, run.id))
    for name, value in fields.items():
        setattr(run, name, value)
    count_into_rollups(run.id)
    return True


def count_into_rollups(run_id: int) -> None:
    """Add the finished run to the long windows' rollups (after its own commit: a rollup
    failure never loses the run; `manage.py rebuild_rollups` recounts from the runs)."""
    try:
        rollups.add_run(run_id)
    except Exception:
        log.exception("could not add run %s to the rollups", run_id)


def request_evaluation(run_id: int) -> None:
    """Ask the alerts app (by task name: no import of it) to evaluate this run's series."""
    try:
        celery_app.send_task(EVALUATE_AFTER_RUN, args=[run_id], queue=CENTRAL_QUEUE)
    except Exception:  # the run is stored; a later run's evaluation covers the same series
        log.exception("could not request alert evaluation for run %s", run_id)


def request_digest(run_id: int) -> None:
    """Ask the advisor (by task name: no import of it) to add this run to its digest."""
    try:
        celery_app.send_task(DIGEST_RUN, args=[run_id], queue=CENTRAL_QUEUE)
    except Exception:  # the advisor's hourly pass over recent days digests it instead
        log.exception("could not request the advisor digest of run %s", run_id)
