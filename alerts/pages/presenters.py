"""An alert event as the words and tables people read (emails and the alert page).

Built from the event's snapshot (the numbers when it happened) and the alert's labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse

from alerts.detection.local_time import slot_label
from alerts.lifecycle.actions import ACTIONS, allowed_actions
from alerts.lifecycle.snapshot import SpeedSnapshot
from alerts.models import ACTIVE, Alert
from alerts.wording import WORSE, headline, p_value, percent, quantity, runs, series_words, when


def absolute(path: str) -> str:
    return f"{settings.TOKSPEED_BASE_URL}{path}"


def _time(value: str | None) -> str:
    return when(datetime.fromisoformat(value)) if value else "–"


@dataclass
class Presented:
    kind: str
    headline: str
    series: str
    severity: str
    facts: list[tuple[str, str]] = field(default_factory=list)  # (label, text)
    tables: list[dict] = field(default_factory=list)  # {"title", "header", "rows"}
    links: list[tuple[str, str]] = field(default_factory=list)  # (label, absolute url)
    # Filled by emails.build for the plain-text body.
    kind_words: str = ""
    text_tables: list[dict] = field(default_factory=list)
    label_width: int = 0


def links(alert: Alert) -> list[tuple[str, str]]:
    out = []
    if alert.endpoint is not None:
        query = {"workload": alert.workload.slug, "vantage": alert.vantage.slug}
        path = reverse("dashboard:endpoint", args=[alert.endpoint.slug])
        out.append(("Endpoint page", absolute(f"{path}?{urlencode(query)}")))
    out.append(("This alert", absolute(reverse("alerts:detail", args=[alert.id]))))
    for action in allowed_actions(alert):
        out.append((ACTIONS[action], absolute(reverse("alerts:action", args=[alert.id, action]))))
    return out


def present(alert: Alert, kind: str, snapshot: dict) -> Presented:
    shown = Presented(
        kind=kind,
        headline=headline(alert, kind, snapshot),
        series=series_words(alert),
        severity=alert.severity,
        links=links(alert),
    )
    if alert.kind == "regression":
        _speed(shown, alert, snapshot)
    elif alert.kind == "outage":
        _outage(shown, snapshot)
    else:
        _probe(shown, snapshot)
    return shown


def _slot(alert: Alert) -> str:
    """ " in the 18–24 UTC slot" for an alert opened on a one-slot slowdown, else ""."""
    bucket = (alert.opened_on or {}).get("bucket")
    if bucket is None:
        return ""
    return f" in the {slot_label(int(bucket), alert.endpoint.demand_zone or None)} slot"


def _of_arm(snap: SpeedSnapshot) -> str:
    """ " (the slot 18–24 UTC arm)": which arm the smallest p is, when no arm found a regression
    now (a clear evaluation's smallest p may belong to an arm still holding runs that are over)."""
    if snap.arm or not snap.arms:
        return ""
    return f" (the {min(snap.arms, key=lambda a: a.p_value).name} arm)"


def confirmed_words(run_ids: list[int]) -> str:
    """ "runs #12, #15 (confirmation runs …)": the extra runs that confirmed a change."""
    named = ", ".join(f"#{run_id}" for run_id in run_ids)
    return (
        f"{'run' if len(run_ids) == 1 else 'runs'} {named} (confirmation runs: extra runs "
        "queued when the evidence was suggestive but short of the bar)"
    )


def _speed(shown: Presented, alert: Alert, snapshot: dict) -> None:
    snap = SpeedSnapshot.from_json(snapshot)
    _speed_test(shown, alert, snap)
    _speed_notes(shown, alert, snap)
    _bucket_table(shown, alert.metric, snap)
    _peer_table(shown, alert.metric, snap)


def _speed_test(shown: Presented, alert: Alert, snap: SpeedSnapshot) -> None:
    """Baseline, recent median, shift and the test that found it."""
    metric = alert.metric
    worse = WORSE[metric]
    level = snap.ci_level or settings.ALERTS_CI_LEVEL
    frozen = " (frozen when the alert opened)" if snap.frozen else ""
    arm = snap.arm
    found = f"found by the {arm} arm; " if arm else ""
    shown.facts += [
        (
            "Baseline mean",
            f"{quantity(snap.baseline_median, metric)} at the same times of day and week"
            f"{frozen} ({runs(snap.n_baseline)} over "
            f"{snap.baseline_span_days or snap.baseline_days} days "
            f"up to {_time(snap.long_start or snap.recent_start)})",
        ),
        (
            "Recent median",
            f"{quantity(snap.recent_median, metric)} ({snap.recent_hours} h "
            f"up to {_time(snap.end)}, {runs(snap.n_recent)})",
        ),
        (
            "Shift",
            f"{percent(snap.shift)} {worse} over the last {snap.recent_hours} h "
            f"({percent(level, 0)} confidence interval {percent(snap.ci_low)} to "
            f"{percent(snap.ci_high)}; each run's typical value against the baseline's "
            "time-of-day and weekday/weekend model)",
        ),
        (
            "Test",
            f"{found}smallest one-sided p = {p_value(snap.p_value)}{_of_arm(snap)}, q = "
            f"{p_value(snap.q_value)} (Benjamini–Hochberg over {snap.family} "
            f"arms of the series evaluated together)",
        ),
    ]


def _speed_notes(shown: Presented, alert: Alert, snap: SpeedSnapshot) -> None:
    """Why an alert is still open, a new baseline, when it started, errors, accepted level."""
    worse = WORSE[alert.metric]
    if alert.status in ACTIVE and snap.verdict == "clear" and snap.recovered is False:
        shown.facts.append(
            (
                "Not resolved yet",
                f"the last {snap.recent_hours} h are back within half the minimum "
                "effect, but there are too few runs yet to tell that from still "
                f"{percent(snap.alert_effect)} {worse}{_slot(alert)} (what the alert was "
                "sure of when it opened); it resolves after two evaluations in a row that can",
            )
        )
    if snap.blind:
        shown.facts.append(
            (
                "New baseline",
                "this series was accepted at a new level recently and has too little history "
                "for a baseline of its own: it is tested for large changes only, against the "
                "old baseline moved to the accepted level",
            )
        )
    if snap.first_bad_at:
        shown.facts.append(("Started around", _time(snap.first_bad_at)))
    if snap.confirmed_by:
        shown.facts.append(("Confirmed by", confirmed_words(snap.confirmed_by)))
    if snap.samples is not None:
        shown.facts.append(
            (
                "Errors",
                f"{snap.errors or 0} of {snap.samples} requests in the last "
                f"{snap.recent_hours} h ({percent(snap.error_rate)}); "
                f"baseline {percent(snap.baseline_error_rate)}",
            )
        )
    if snap.segment_start:
        shown.facts.append(("Baseline since", f"{_time(snap.segment_start)} (accepted)"))


def _bucket_table(shown: Presented, metric: str, snap: SpeedSnapshot) -> None:
    """The baseline model against the last 72 h in each time-of-day bucket."""
    worse = WORSE[metric]
    rows = [
        [
            b.label,
            quantity(b.baseline_median, metric),
            quantity(b.recent_median, metric),
            percent(b.change),
            f"{b.n_baseline} / {b.n_recent}",
        ]
        for b in snap.buckets or []
    ]
    if rows:
        shown.tables.append(
            {
                "title": "By time of day (baseline model vs the last 72 h)",
                "header": [
                    "Time of day",
                    "Baseline",
                    "Last 72 h",
                    f"Change ({worse})",
                    "Runs (baseline / last 72 h)",
                ],
                "rows": rows,
            }
        )


def _peer_table(shown: Presented, metric: str, snap: SpeedSnapshot) -> None:
    """The same model at other providers over the same days."""
    worse = WORSE[metric]
    peer_rows = [
        [
            p.endpoint,
            quantity(p.baseline_median, metric),
            quantity(p.recent_median, metric),
            percent(p.change),
        ]
        for p in snap.peers or []
    ]
    shown.tables.append(
        {
            "title": "Same model at other providers (same workload and vantage, same days)",
            "header": ["Endpoint", "Baseline", "Recent", f"Change ({worse})"],
            "rows": peer_rows,
            "empty": "No other provider serves this model here.",
        }
    )


def _outage(shown: Presented, snap: dict) -> None:
    categories = snap.get("error_categories") or {}
    named = ", ".join(f"{name} × {n}" for name, n in categories.items()) or "none"
    shown.facts += [
        (
            "Errors",
            f"{snap.get('errors', 0)} of {snap.get('samples', 0)} requests over the last "
            f"{len(snap.get('runs', []))} runs ({percent(snap.get('error_rate'))})",
        ),
        ("By category", named),
    ]
    shown.tables.append(
        {
            "title": "Last runs",
            "header": ["Slot", "Succeeded", "Failed"],
            "rows": [
                [_time(r["slot"]), str(r["ok"]), str(r["errors"])] for r in snap.get("runs", [])
            ],
        }
    )


def _probe(shown: Presented, snap: dict) -> None:
    shown.facts.append(
        (
            "Series worse at once",
            f"{snap.get('positive', 0)} of {snap.get('total', 0)} recently evaluated series "
            f"({percent(snap.get('share'), 0)}), across {snap.get('endpoints', 0)} endpoints. "
            "So many providers rarely slow down together: check the probe's machine and network "
            "first. Alerts of single series are held back while this one is open.",
        )
    )
    shown.tables.append(
        {
            "title": "Series that got worse",
            "header": ["Endpoint", "Workload", "Metric"],
            "rows": [[s["endpoint"], s["workload"], s["metric"]] for s in snap.get("series", [])],
        }
    )
