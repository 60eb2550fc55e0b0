"""Exports page ("/exports/"): ask for a background export and follow one's own exports.

A signed-in user's page, like the API's background exports (/api/v1/exports/): the form posts
to the same job machinery (dashboard/exports/jobs.py), a worker builds the file, the page links
it (and the email does) until it expires. Always read from the primary: it shows a job just
asked for.
"""

from datetime import datetime
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from benchmarks.models import Export, ExportStatus

from ..export_forms import ExportRequestForm
from ..exports import jobs
from ..run_filters import bound_form
from ..tasks import build_export
from .access import bad_request
from .runs import check_query

LISTED = 100


@login_required
def exports_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = ExportRequestForm(request.POST)
        status, csv_query, retry_after = 400, "", None
        if form.is_valid():
            try:
                export = jobs.request_export(
                    kind=form.cleaned_data["kind"],
                    file_format=form.cleaned_data["file_format"],
                    filters=form.api_filters(),
                    user=request.user,
                )
            except jobs.QuotaExceeded as over:
                messages.error(request, str(over))
                status, retry_after = 429, over.retry_after_s
            else:
                build_export.delay_on_commit(export.id)
                messages.success(
                    request,
                    f"Export of {export.kind} queued. It appears below when ready"
                    + (f" and the link goes to {export.email}." if export.email else "."),
                )
                return redirect("dashboard:exports")
    else:
        # Arriving from the runs list: its filters become the form's starting values.
        try:
            check_query(request.GET)
        except ValidationError as error:
            return bad_request(request, error)
        prefill = bound_form(request.GET)
        if request.GET and not prefill.is_valid():
            return bad_request(request, ValidationError(prefill.errors.as_data()))
        initial = prefill.page_filters() if request.GET else {}
        form = ExportRequestForm(initial={"kind": "runs", "file_format": "csv.gz", **initial})
        status, csv_query = 200, urlencode(prefill.api_filters()) if request.GET else ""
        retry_after = None
    exports = Export.objects.filter(requested_by=request.user).order_by("-created_at")[:LISTED]
    now = timezone.now()
    response = render(
        request,
        "dashboard/exports.html",
        {
            "form": form,
            "exports": [describe(e, now=now) for e in exports],
            "keep_hours": settings.TOKSPEED_EXPORT_KEEP_HOURS,
            "stream_max_rows": settings.TOKSPEED_EXPORT_STREAM_MAX_ROWS,
            "csv_query": csv_query,
        },
        status=status,
    )
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def describe(export: Export, *, now: datetime) -> dict:
    """One export as the page shows it: its state in words, and a link only while it works."""
    expired = export.expires_at is not None and export.expires_at <= now
    ready = export.status == ExportStatus.DONE and not expired and bool(export.file_name)
    if expired:
        state, words = (
            "expired",
            (
                f"Expired {export.expires_at:%Y-%m-%d %H:%M} UTC; the file was deleted. "
                "Ask for it again."
            ),
        )
    elif export.status == ExportStatus.FAILED:
        reason = export.error or "no reason recorded"
        state, words = "failed", f"Failed: {reason}. No file was kept; ask for it again."
    elif export.status == ExportStatus.PENDING:
        state, words = "pending", "Waiting for a worker."
    elif export.status == ExportStatus.RUNNING:
        state, words = "running", "Being written now."
    else:
        state, words = "done", f"Ready until {export.expires_at:%Y-%m-%d %H:%M} UTC."
    return {
        "export": export,
        "state": state,
        "words": words,
        "filters": _filters_in_words(export.filters),
        "download": reverse("api-export-download", args=[export.token]) if ready else None,
    }


def _filters_in_words(filters: dict[str, str]) -> str:
    if not filters:
        return "all runs"
    return ", ".join(f"{name} {value}" for name, value in filters.items())
