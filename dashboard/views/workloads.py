"""Workloads page ("/workloads/"): every workload's name and shape, a link to its own board,
and, for operators, a form for a team's own workload. Text only for those allowed to read it."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from benchmarks.confidential import shape
from benchmarks.models import Workload

from ..roles import is_operator
from ..workload_forms import WorkloadForm
from .access import dashboard_view


@dashboard_view
def workloads_page(request: HttpRequest) -> HttpResponse:
    operator = is_operator(request.user)
    form = WorkloadForm() if operator else None
    status = 200
    if request.method == "POST":
        if not operator:
            return HttpResponse("Only operators create workloads.", status=403)
        form = WorkloadForm(request.POST, request.FILES)
        if form.is_valid():
            workload = form.save()
            messages.success(request, f"Workload {workload.name} created.")
            return redirect("dashboard:workloads")
        status = 400
    workloads = Workload.objects.defer("context_document").order_by("custom", "slug")
    rows = [{"workload": w, "shape": shape(w)} for w in workloads]
    return render(request, "dashboard/workloads.html", {"rows": rows, "form": form}, status=status)
