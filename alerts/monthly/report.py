"""Building the monthly report from the leaderboard's own rows (one selector, the same windows).

Every figure is a BoardRow of benchmarks.selectors.leaderboard with the month as its explicit
window [start, end): medians of per-run medians with p25–p75 as their spread, availability =
1 − the row's error rate, cost per request from benchmarks.money. Workloads appear by name only:
a custom workload's text never enters a report (docs/workloads.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from django.db.models import Q

from alerts.models import AdviceChange, Alert, Status
from benchmarks.buckets import BUCKETS
from benchmarks.models import Run
from benchmarks.selectors.filters import BoardFilters
from benchmarks.selectors.leaderboard import leaderboard
from benchmarks.selectors.rows import BoardRow, mark_ties, sort_rows
from benchmarks.selectors.scope import DEFERRED_TEXT, FINISHED, Workloads, resolve_vantage

from .month import Month


@dataclass(frozen=True, slots=True)
class Figures:
    """One endpoint over one month: the board row's medians, spread and availability."""

    runs: int = 0
    saturated_runs: int = 0  # runs whose client was saturated: kept in the medians, marked
    ttft_p25_ms: float | None = None
    ttft_p50_ms: float | None = None
    ttft_p75_ms: float | None = None
    decode_tps_p25: float | None = None
    decode_tps_p50: float | None = None
    decode_tps_p75: float | None = None
    availability: float | None = None
    cost_per_request_usd: float | None = None

    @classmethod
    def of(cls, row: BoardRow | None) -> Figures:
        if row is None or not row.has_data:
            return cls()
        return cls(
            runs=row.runs,
            saturated_runs=row.saturated_runs,
            ttft_p25_ms=row.ttft_p25_ms,
            ttft_p50_ms=row.ttft_p50_ms,
            ttft_p75_ms=row.ttft_p75_ms,
            decode_tps_p25=row.decode_tps_p25,
            decode_tps_p50=row.decode_tps_p50,
            decode_tps_p75=row.decode_tps_p75,
            availability=None if row.error_rate is None else 1.0 - row.error_rate,
            cost_per_request_usd=row.cost_per_request_usd,
        )


def change(now: float | None, before: float | None) -> float | None:
    """The relative change from the month before (0.1 = 10 % higher); None when unknown."""
    return now / before - 1.0 if now is not None and before else None


def named(label: str, provider: str) -> str:
    """An endpoint as the report names it: the board row's label at its provider."""
    return f"{label} @ {provider}"


@dataclass(frozen=True, slots=True)
class EndpointMonth:
    endpoint_id: int
    slug: str
    label: str
    provider: str
    lane: str
    price_in_per_mtok: float | None
    price_out_per_mtok: float | None
    blended_price_per_mtok: float | None
    month: Figures
    before: Figures

    @property
    def name(self) -> str:
        """The row's name where it is read: one model at several providers names each."""
        return named(self.label, self.provider)

    @property
    def ttft_change(self) -> float | None:
        return change(self.month.ttft_p50_ms, self.before.ttft_p50_ms)

    @property
    def decode_change(self) -> float | None:
        return change(self.month.decode_tps_p50, self.before.decode_tps_p50)


@dataclass(frozen=True, slots=True)
class Winners:
    """The best of one workload or one time of day: ranked as the board ranks (ties share)."""

    scope: str
    decode: tuple[str, ...]
    decode_tps: float | None
    ttft: tuple[str, ...]
    ttft_ms: float | None


@dataclass(frozen=True, slots=True)
class AlertLine:
    id: int
    what: str
    endpoint: str
    workload: str
    severity: str
    opened_at: datetime
    ended: str
    closed_at: datetime | None


@dataclass(frozen=True, slots=True)
class AdviceLine:
    profile: str
    before: str
    after: str
    at: datetime
    reason: str


@dataclass(frozen=True, slots=True)
class MonthlyReport:
    month: Month
    vantage: str
    endpoints: tuple[EndpointMonth, ...]
    workloads: tuple[Winners, ...]
    times_of_day: tuple[Winners, ...]
    alerts: tuple[AlertLine, ...]
    advice: tuple[AdviceLine, ...]

    @property
    def has_data(self) -> bool:
        return any(e.month.runs for e in self.endpoints) or bool(self.alerts or self.advice)


def board(month: Month, **filters: object) -> list[BoardRow]:
    """The leaderboard for the month (the same selector and filters as the board's)."""
    return leaderboard(BoardFilters(since=month.start, until=month.end, **filters))


def build(month: Month) -> MonthlyReport:
    vantage = resolve_vantage(None)
    now_rows = {row.endpoint_id: row for row in board(month)}
    before_rows = {row.endpoint_id: row for row in board(month.previous)}
    # An endpoint measured in either month (one gone quiet since still shows the month before).
    endpoints = [
        _endpoint(row, now_rows.get(row.endpoint_id), before_rows.get(row.endpoint_id))
        for row in {**before_rows, **now_rows}.values()
        if row.has_data or getattr(before_rows.get(row.endpoint_id), "has_data", False)
    ]
    endpoints.sort(key=lambda e: (e.month.decode_tps_p50 is None, -(e.month.decode_tps_p50 or 0)))
    return MonthlyReport(
        month=month,
        vantage=vantage.label if vantage else "",
        endpoints=tuple(endpoints),
        workloads=tuple(_workload_winners(month, vantage)),
        times_of_day=tuple(
            _winners(label, board(month, tod_bucket=bucket)) for bucket, label in BUCKETS.items()
        ),
        alerts=tuple(_alerts(month)),
        advice=tuple(_advice(month)),
    )


def _endpoint(row: BoardRow, now: BoardRow | None, before: BoardRow | None) -> EndpointMonth:
    return EndpointMonth(
        endpoint_id=row.endpoint_id,
        slug=row.slug,
        label=row.label,
        provider=row.provider,
        lane=row.lane,
        price_in_per_mtok=row.price_in_per_mtok,
        price_out_per_mtok=row.price_out_per_mtok,
        blended_price_per_mtok=row.blended_price_per_mtok,
        month=Figures.of(now),
        before=Figures.of(before),
    )


def _workload_winners(month: Month, vantage) -> list[Winners]:
    used = set(
        Run.objects.filter(
            vantage=vantage, slot__gte=month.start, slot__lt=month.end, status__in=FINISHED
        ).values_list("workload_id", flat=True)
    )
    chosen = [w for w in Workloads.load().items if w.id in used]
    chosen.sort(key=lambda w: (w.custom, w.name.lower()))
    return [_winners(w.name, board(month, workload=w.slug)) for w in chosen]


def _best(rows: list[BoardRow], key: str, attr: str) -> tuple[tuple[str, ...], float | None]:
    """The rows ranked first by `key` (several when tied), and the first one's figure."""
    ranked = sort_rows([replace(row) for row in rows if row.has_data], key)
    mark_ties(ranked, key)
    first = [row for row in ranked if row.rank == 1]
    names = tuple(named(row.label, row.provider) for row in first)
    return names, getattr(first[0], attr) if first else None


def _winners(scope: str, rows: list[BoardRow]) -> Winners:
    decode, decode_tps = _best(rows, "decode", "decode_tps_p50")
    ttft, ttft_ms = _best(rows, "ttft", "ttft_p50_ms")
    return Winners(scope=scope, decode=decode, decode_tps=decode_tps, ttft=ttft, ttft_ms=ttft_ms)


ENDINGS = {
    Status.OPEN: "still open",
    Status.ACKNOWLEDGED: "acknowledged, still open",
    Status.RESOLVED: "resolved",
    Status.ACCEPTED: "accepted as the new baseline",
    Status.INVALID: "marked invalid",
    Status.NEW_NORMAL: "closed as the new normal",
}


def _alerts(month: Month) -> list[AlertLine]:
    """Alerts open at any time in the month: opened before its end, not closed before its start."""
    alerts = (
        Alert.objects.filter(opened_at__lt=month.end)
        .filter(Q(closed_at__isnull=True) | Q(closed_at__gte=month.start))
        .select_related("endpoint__provider", "workload")
        .defer(*(f"workload__{name}" for name in DEFERRED_TEXT))
        .order_by("opened_at", "id")
    )
    return [
        AlertLine(
            id=a.id,
            what=f"{a.get_kind_display()}: {a.get_metric_display()}",
            endpoint=a.endpoint.label if a.endpoint else "every endpoint",
            workload=a.workload.name if a.workload else "",
            severity=a.severity,
            opened_at=a.opened_at,
            ended=ENDINGS.get(a.status, a.status),
            closed_at=a.closed_at if a.closed_at and a.closed_at < month.end else None,
        )
        for a in alerts
    ]


def _advice(month: Month) -> list[AdviceLine]:
    changes = AdviceChange.objects.filter(
        created_at__gte=month.start, created_at__lt=month.end
    ).select_related("profile")
    return [
        AdviceLine(
            profile=c.profile.name,
            before=c.before_label or "nothing",
            after=c.after_label,
            at=c.created_at,
            reason=c.reason,
        )
        for c in changes.order_by("created_at", "id")
    ]
