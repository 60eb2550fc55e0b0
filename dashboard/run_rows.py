"""Tables of runs written out here rather than by the template engine: the runs list's rows (a
page of 50 runs cost ~1,300 template lookups and filter calls, about 8 ms, a third of the page)
and the endpoint page's recent runs; the same markup for every row. The values are escaped as
the template escaped them, the figures formatted by the template's own filters
(dashboard_format)."""

from datetime import UTC
from html import escape  # what django.utils.html.escape calls, without its lazy-text wrapper
from typing import Any

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from benchmarks.models import Run, RunStatus

from .templatetags.dashboard_format import DASH, ms, tps

REASON_CHARS = 80  # a failure reason's length in the row (its title holds the whole text)


def run_rows_html(runs: list[Run]) -> SafeString:
    """Each run's <tr> (runs with their endpoint and provider, workload and vantage loaded)."""
    return mark_safe("".join(_row(run) for run in runs))  # noqa: S308 - every value escaped


def _row(run: Run) -> str:
    endpoint, provider = run.endpoint, run.endpoint.provider
    status = escape(run.status)
    failed = ' class="failed"' if run.status == RunStatus.FAILED else ""
    simulated = " · simulated" if provider.simulated else ""
    name = escape(endpoint.display_name or endpoint.model)
    page = reverse("dashboard:endpoint", args=[endpoint.slug])
    requests = reverse("dashboard:run", args=[run.id])
    return (
        f'\n    <tr data-run="{run.id}"{failed}>\n'
        f'      <td class="slot wide">{run.slot.astimezone(UTC):%Y-%m-%d %H:%M}</td>\n'
        f'      <td class="name wide"><a href="{page}">{name}</a>'
        f'<span class="sub">{escape(provider.name)}{simulated}</span></td>\n'
        f'      <td class="workload" data-label="Workload">{escape(run.workload.name)}</td>\n'
        f'      <td class="num" data-label="Concurrency">{run.concurrency}</td>\n'
        f'      <td data-label="Vantage">{escape(run.vantage.slug)}</td>\n'
        f'      <td class="status-cell" data-label="Status"><span class="status s-{status}">'
        f"{status}</span>{_reason(run)}{_downgraded(run)}</td>\n"
        f'      <td class="num" data-label="TTFT p50">{ms(run.ttft_p50_ms)}</td>\n'
        f'      <td class="num" data-label="Decode p50">{_decode(run)}</td>\n'
        f'      <td class="num" data-label="OK / errors">{run.ok_count} / {_errors(run)}</td>\n'
        f'      <td class="requests"><a href="{requests}">requests ›</a></td>\n    </tr>\n  '
    )


def _reason(run: Run) -> str:
    if not run.failure_reason:
        return ""
    shown = escape(Truncator(run.failure_reason).chars(REASON_CHARS))
    return f'<span class="sub reason" title="{escape(run.failure_reason)}">{shown}</span>'


def _downgraded(run: Run) -> str:
    if not run.downgraded:
        return ""
    lane = escape(run.lane)
    return (
        '<span class="sub warn downgraded" title="Some requests were served in a lower lane '
        f"than asked: kept out of the {lane} lane's figures\">served below its {lane} lane</span>"
    )


def _decode(run: Run) -> str:
    shown = f"{tps(run.decode_tps_p50)} tok/s" if run.decode_tps_p50 is not None else DASH
    if not run.saturated_count:
        return shown
    plural = "" if run.saturated_count == 1 else "s"
    return (
        f'{shown}<span class="sub warn" title="The client read slower than the server wrote in '
        f'{run.saturated_count} request{plural}: decode may read low">client saturated</span>'
    )


def recent_rows_html(recent: list[dict[str, Any]]) -> SafeString:
    """The endpoint page's recent runs (selectors.history's "recent_runs"), a <tr> each."""
    return mark_safe("".join(_recent_row(run) for run in recent))  # noqa: S308 - escaped


def _recent_row(run: dict[str, Any]) -> str:
    status, saturated = escape(run["status"]), run["saturated"]
    note = ""
    if saturated:
        plural = "" if saturated == 1 else "s"
        note = (
            '<span class="spread saturated-note" title="The client read slower than the server '
            f'wrote in {saturated} request{plural}: decode may read low">client saturated</span>'
        )
    return (
        f"\n    <tr><td>{escape(run['slot_label'])}</td><td>{escape(run['workload_name'])}</td>"
        f'<td class="num">{run["concurrency"]}</td>\n'
        f'      <td><span class="status s-{status}">{status}</span></td>\n'
        f'      <td class="num">{ms(run["ttft_ms"])}</td><td class="num">'
        f'{tps(run["decode_tps"])}{note}</td><td class="num">{ms(run["e2e_ms"])}</td>\n'
        f'      <td class="num">{tps(run["throughput_tps"])}</td><td class="num">{run["ok"]} / '
        f'{run["errors"]}</td>\n      <td><a href="/runs/{run["id"]}/">requests ›</a></td></tr>\n  '
    )


def _errors(run: Run) -> str:
    return f'<span class="bad">{run.error_count}</span>' if run.error_count else "0"
