"""Run page ("/runs/<id>/"): the one page that reads samples — a waterfall per request."""

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from benchmarks.confidential import can_read_prompt_text, shape
from benchmarks.models import Run, Sample
from benchmarks.retention import sample_cutoff

from .access import dashboard_view

# A peak-concurrency run can be large; the waterfall stays readable up to this many requests.
MAX_SAMPLES = 500


def waterfall(sample: Sample) -> dict[str, Any]:
    """One request's phases in ms from t0: connect, waiting for headers, to first token, decode."""
    connect = sample.connect_ms or 0.0
    headers = sample.ttfb_ms
    first = sample.ttft_ms
    end = sample.total_ms
    return {
        "index": sample.index,
        "ok": sample.ok,
        "error": sample.error_category,
        "connect": [0.0, connect],
        "headers": [connect, headers] if headers is not None else None,
        "first_token": [headers, first] if headers is not None and first is not None else None,
        "decode": [first, end] if first is not None and end is not None else None,
        # An error ends the request wherever it was: show the time until it, in its own colour.
        "failed": [headers or connect, end] if not sample.ok and end is not None else None,
    }


@dashboard_view
def run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(
        Run.objects.select_related("endpoint__provider", "workload", "vantage"), pk=run_id
    )
    samples = list(run.samples.order_by("index")[:MAX_SAMPLES])
    return render(
        request,
        "dashboard/run.html",
        {
            "run": run,
            "samples": samples,
            "truncated": run.samples.count() > MAX_SAMPLES
            if len(samples) == MAX_SAMPLES
            else False,
            "waterfall": [waterfall(s) for s in samples],
            "samples_expired": _expired(run),
            "retention_days": settings.TOKSPEED_SAMPLE_RETENTION_DAYS,
            "prompt_rows": prompt_rows(run, can_read_prompt_text(request.user)),
            "workload_shape": shape(run.workload),
            "downgrade": downgrade_note(run),
        },
    )


def prompt_rows(run: Run, readable: bool) -> list[dict[str, Any]]:
    """The per-prompt breakdown of a suite run; each prompt's text only for a reader with
    the permission (benchmarks.confidential), a number for everyone else."""
    rows = run.summary.get("prompts") or [] if isinstance(run.summary, dict) else []
    suite = run.workload.prompt_suite or [run.workload.prompt]
    out = []
    for row in rows:
        index = row.get("prompt")
        text = suite[index] if readable and isinstance(index, int) and index < len(suite) else ""
        out.append({**row, "number": (index or 0) + 1, "text": text})
    return out


def downgrade_note(run: Run) -> str:
    """Why a run served below the lane it asked for is left out of that lane's figures ("" for
    any other run): the lanes its requests were served in, from its summary."""
    if not run.downgraded:
        return ""
    served = run.summary.get("downgraded") if isinstance(run.summary, dict) else None
    counts = sorted(served.items()) if isinstance(served, dict) else []
    parts = [f"{n} request{'s' if n != 1 else ''} at {lane}" for lane, n in counts]
    said = f": the provider served {', '.join(parts)}" if parts else ""
    return (
        f"Asked for the {run.lane} lane{said}. This run is kept out of the {run.lane} lane's "
        "figures (boards, rollups, alerts and advice)."
    )


def _expired(run: Run) -> bool:
    """Its samples are past retention (deleted, or about to be): the summary is all there is."""
    cutoff = sample_cutoff(timezone.now())
    return cutoff is not None and run.slot < cutoff
