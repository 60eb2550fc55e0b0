"""The monthly report ("/reports/monthly/<yyyy-mm>/"): the page and its CSV (alerts.monthly
builds it from the leaderboard's rows for the month's window)."""

from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from alerts.monthly import tables
from alerts.monthly.month import Month
from alerts.monthly.report import build

from ..csv_rows import csv_lines, monthly_rows
from .access import dashboard_view


def _month(text: str) -> Month:
    try:
        return Month.parse(text)
    except ValueError as error:
        raise Http404(str(error)) from error


@dashboard_view
def monthly_latest(request: HttpRequest) -> HttpResponse:
    """The last complete month's report."""
    return redirect("dashboard:monthly_report", Month.last_complete().slug)


@dashboard_view
def monthly_report_page(request: HttpRequest, month: str) -> HttpResponse:
    chosen = _month(month)
    report = build(chosen)
    now = timezone.now()
    return render(
        request,
        "dashboard/monthly_report.html",
        {
            "report": report,
            "cells": tables.tables(report),
            "endpoint_header": tables.ENDPOINT_HEADER,
            "winner_header": tables.WINNER_HEADER[1:],
            "previous": chosen.previous if chosen.previous.year >= 1970 else None,
            "next": chosen.next if chosen.next.start <= now else None,
            "in_progress": chosen.start <= now < chosen.end,
            "upcoming": chosen.start > now,
        },
    )


@dashboard_view
def monthly_report_csv(request: HttpRequest, month: str) -> StreamingHttpResponse:
    chosen = _month(month)
    header, rows = monthly_rows(build(chosen))
    response = StreamingHttpResponse(
        csv_lines(header, rows, with_footer=False), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="tokspeed-monthly-{chosen.slug}.csv"'
    return response
