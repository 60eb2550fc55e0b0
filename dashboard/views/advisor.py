"""Advisor pages: "/advisor/" (every profile's answer) and "/advisor/<profile>/" (one, in full),
and the staff action that queues the runs a profile's shape is missing."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from advisor.advice import advise
from advisor.feeds import FORMATS
from advisor.missing import missing_runs, queue_missing
from advisor.models import WorkloadProfile
from advisor.projection import MIN_RUNS
from advisor.shape import Shape
from benchmarks.confidential import can_read_prompt_text, shape
from benchmarks.task_time import ATTENTION_S, IMMEDIATE_S

from ..advice_query import FORBIDDEN, parse
from .access import dashboard_view
from .listing import listed


@dashboard_view
def advisor_index(request: HttpRequest) -> HttpResponse:
    profiles = WorkloadProfile.objects.select_related("current_endpoint", "workload")
    if not can_read_prompt_text(request.user):
        profiles = profiles.filter(
            workload__isnull=True
        )  # a custom workload's advice is its team's
    answers = [(profile, advise(Shape.of(profile), profile=profile)) for profile in profiles]
    return render(
        request,
        "dashboard/advisor_index.html",
        {
            "answers": answers,
            "thresholds": {"immediate": IMMEDIATE_S, "attention": ATTENTION_S},
            "thin_answers": sum(1 for _, advice in answers if advice.thin_count),
            "min_runs": MIN_RUNS,
        },
    )


@dashboard_view
def advisor_profile(request: HttpRequest, slug: str) -> HttpResponse:
    get_object_or_404(WorkloadProfile, slug=slug)
    question = parse(request.GET, profile_slug=slug)
    if not question.allowed(request.user):
        raise PermissionDenied(FORBIDDEN)
    advice = advise(
        question.shape,
        profile=question.profile,
        current=question.current,
        vantage=question.vantage,
        workload=question.workload,
    )
    ranked, all_rows_query = listed(request.GET, advice.options)
    asked = request.GET.copy()
    asked.pop("rows", None)  # the page's own: the API lists `limit` rows
    query = asked.urlencode()
    api = f"/api/v1/advice/?profile={slug}" + (f"&{query}" if query else "")
    context = {
        "profile": question.profile,
        "advice": advice,
        "ranked": ranked,
        "all_rows_query": all_rows_query,
        "shape": question.shape,
        "missing": missing_runs(advice),
        "feeds": [(name, f"{api}&format={name}") for name in FORMATS],
        "api_url": api,
        "workload_shape": shape(advice.workload) if advice.workload else None,
    }
    return render(request, "dashboard/advisor.html", context)


@require_POST
@staff_member_required
def advisor_measure(request: HttpRequest, slug: str) -> HttpResponse:
    profile = get_object_or_404(WorkloadProfile, slug=slug)
    if profile.workload_id is not None and not can_read_prompt_text(request.user):
        raise PermissionDenied(FORBIDDEN)
    runs, plan = queue_missing(advise(Shape.of(profile), profile=profile))
    if runs:
        queued = f"Queued {len(runs)} run{'s' if len(runs) != 1 else ''}: "
        messages.success(request, queued + ", ".join(map(str, runs)))
    elif not plan.left_out:
        messages.info(request, "Nothing to queue: every endpoint is measured for this shape.")
    if plan.left_out:
        messages.warning(request, plan.left_out_line())
    return redirect("dashboard:advisor_profile", slug=slug)
