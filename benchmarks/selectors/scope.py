"""Which runs a page looks at: the vantage, the workloads and the time window."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from ..models import Run, Vantage, Workload

DEFERRED_TEXT = ("system_prompt", "prompt_suite", "context_document", "tools")
# Runs that have ended; queued/running ones have no summary yet and skipped ones were never sent.
FINISHED = Run.FINISHED


def resolve_vantage(vantage: Vantage | str | None) -> Vantage | None:
    """A Vantage from an instance or a slug; None = the default one (or the first)."""
    if isinstance(vantage, Vantage):
        return vantage
    if vantage:
        return Vantage.objects.filter(slug=vantage).first()
    return Vantage.objects.order_by("-is_default", "slug").first()


@dataclass(frozen=True, slots=True)
class Vantages:
    """Every vantage, default first (a handful of rows), read once per page: resolving the
    page's vantage and listing the filter bar's choices cost no further queries."""

    items: tuple[Vantage, ...]

    @classmethod
    def load(cls) -> "Vantages":
        return cls(tuple(Vantage.objects.order_by("-is_default", "slug")))

    def resolve(self, vantage: str | None) -> Vantage | None:
        """resolve_vantage of a slug from these rows; None = the default one (or the first)."""
        if vantage:
            return next((v for v in self.items if v.slug == vantage), None)
        return next(iter(self.items), None)


@dataclass(frozen=True, slots=True)
class Workloads:
    """Every workload, read once per page (a handful of rows), so that picking the base and
    long-context workloads, names and concurrencies costs no further queries."""

    items: tuple[Workload, ...]

    @classmethod
    def load(cls) -> "Workloads":
        # A custom workload's text can be megabytes: pages need its name and shape only.
        return cls(tuple(Workload.objects.defer(*DEFERRED_TEXT)))

    def standard(self) -> list[Workload]:
        """The shared board's workloads: the standard prompt, no team's own text."""
        return [w for w in self.items if not w.custom]

    def by_slug(self, slug: str) -> Workload | None:
        return next((w for w in self.items if w.slug == slug), None)

    def base(self) -> Workload | None:
        """The standard request: no context padding, one request in flight ("base" first)."""
        candidates = [w for w in self.standard() if w.context_tokens == 0 and w.concurrency == 1]
        return next((w for w in candidates if w.slug == "base"), None) or next(
            iter(candidates), None
        )

    def long(self) -> Workload | None:
        """The long-context variant at concurrency 1 (the largest padding if there are several)."""
        candidates = [w for w in self.standard() if w.context_tokens > 0 and w.concurrency == 1]
        candidates.sort(key=lambda w: (-w.context_tokens, w.slug))
        return next(iter(candidates), None)

    def base_context(self) -> list[Workload]:
        """Workloads without padding: the concurrency curve is drawn from these."""
        return [w for w in self.standard() if w.context_tokens == 0]

    def resolve(self, workload: Workload | str | None) -> Workload | None:
        """A Workload from an instance or a slug; None = the base workload."""
        if isinstance(workload, Workload):
            return workload
        return self.by_slug(workload) if workload else self.base()


def resolve_workload(workload: Workload | str | None) -> Workload | None:
    """A Workload from an instance or a slug; None = the base workload."""
    return Workloads.load().resolve(workload)


def since(window_hours: int, *, now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(hours=window_hours)


def slot_q(window_hours: int, *, start: datetime | None = None, end: datetime | None = None) -> Q:
    """Runs whose slot lies in [start, end); without a start, the window_hours before the end
    (or now)."""
    where = Q(slot__gte=start if start is not None else since(window_hours, now=end))
    return where & Q(slot__lt=end) if end is not None else where


def window_runs(
    *,
    vantage: Vantage | None,
    window_hours: int,
    tod_bucket: int | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> QuerySet[Run]:
    """Finished runs from one vantage whose slot lies in the window (indexed on vantage, slot);
    start/end: an explicit window [start, end) instead of the last window_hours."""
    # A run served below the lane it asked for is not that lane's speed (providers.lanes).
    runs = Run.objects.filter(
        slot_q(window_hours, start=start, end=end), status__in=FINISHED, downgraded=False
    )
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
