"""Which runs a page looks at: the vantage, the workloads and the time window."""

from datetime import datetime, timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from ..models import Run, RunStatus, Vantage, Workload

# Runs that have ended; queued/running ones have no summary yet and skipped ones were never sent.
FINISHED = (RunStatus.DONE, RunStatus.PARTIAL, RunStatus.FAILED)


def resolve_vantage(vantage: Vantage | str | None) -> Vantage | None:
    """A Vantage from an instance or a slug; None = the default one (or the first)."""
    if isinstance(vantage, Vantage):
        return vantage
    if vantage:
        return Vantage.objects.filter(slug=vantage).first()
    return Vantage.objects.order_by("-is_default", "slug").first()


def resolve_workload(workload: Workload | str | None) -> Workload | None:
    """A Workload from an instance or a slug; None = the base workload."""
    if isinstance(workload, Workload):
        return workload
    if workload:
        return Workload.objects.filter(slug=workload).first()
    return base_workload()


def base_workload() -> Workload | None:
    """The standard request: no context padding, one request in flight ("base" if it exists)."""
    candidates = Workload.objects.filter(context_tokens=0, concurrency=1)
    return candidates.filter(slug="base").first() or candidates.first()


def long_workload() -> Workload | None:
    """The long-context variant at concurrency 1 (the largest padding if there are several)."""
    return (
        Workload.objects.filter(context_tokens__gt=0, concurrency=1)
        .order_by("-context_tokens", "slug")
        .first()
    )


def since(window_hours: int, *, now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(hours=window_hours)


def window_runs(
    *, vantage: Vantage | None, window_hours: int, tod_bucket: int | None = None
) -> QuerySet[Run]:
    """Finished runs from one vantage whose slot lies in the window (indexed on vantage, slot)."""
    runs = Run.objects.filter(slot__gte=since(window_hours), status__in=FINISHED)
    runs = runs.filter(vantage=vantage) if vantage else runs.none()
    if tod_bucket is not None:
        runs = runs.filter(tod_bucket=tod_bucket)
    return runs


def concurrency_q(concurrency: int | str | None) -> Q:
    """Runs at a concurrency: a number, or "peak" (workloads sized to each endpoint's peak)."""
    if concurrency is None:
        return Q()
    if concurrency == "peak":
        return Q(workload__concurrency=0)
    return Q(concurrency=concurrency)
