"""Active alerts shown on dashboard pages: compact badges on the leaderboard, a banner on the
endpoint page, a short list per row in the leaderboard API.

Alerts come from alerts.pages.selectors.open_alerts_by_endpoint (one query for any number of
endpoints, workload and vantage joined), so nothing here may touch another relation: the
words are built from the alert's own fields and those two.
"""

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from alerts.models import Alert, Kind, Metric, Status
from alerts.wording import METRIC_WORDS, UNITS, WORSE, percent, quantity, when

# A row shows at most this many badges; the rest are a "+N" link to the endpoint's alerts.
MAX_BADGES = 2
SHORT_METRIC = {Metric.DECODE: "decode", Metric.TTFT: "TTFT"}


def badge_text(alert: Alert) -> str:
    """'▼ decode −18 %', '▲ TTFT +22 %' or 'outage': what went wrong, in a dozen characters.

    Shifts are stored worse-oriented (0.18 = 18 % worse); the sign shown is the direction the
    value moved: decode speed falls, TTFT rises.
    """
    if alert.kind == Kind.OUTAGE:
        return "outage"
    if alert.kind == Kind.INFRASTRUCTURE:
        return "probe"
    name = SHORT_METRIC.get(alert.metric, alert.metric)
    if alert.shift is None:
        return f"{name} worse"
    size = round(abs(alert.shift) * 100)
    if alert.metric == Metric.DECODE:
        return f"▼ {name} −{size}\u00a0%"
    return f"▲ {name} +{size}\u00a0%"


def badge_title(alert: Alert) -> str:
    """The hover text: the series, the numbers, and since when."""
    where = (
        f"workload “{alert.workload.name}”, from {alert.vantage.label}" if alert.workload else ""
    )
    if alert.kind == Kind.OUTAGE:
        categories = ", ".join(sorted(alert.error_categories or {})) or "errors"
        what = f"Outage: {percent(alert.error_rate, 0)} of requests failed ({categories})"
    elif alert.metric in UNITS:
        what = (
            f"{METRIC_WORDS[alert.metric]} {percent(alert.shift, 0)} {WORSE[alert.metric]}: "
            f"{quantity(alert.baseline_median, alert.metric)} → "
            f"{quantity(alert.recent_median, alert.metric)}"
        )
    else:
        what = METRIC_WORDS.get(alert.metric, alert.metric)
    status = " · acknowledged" if alert.status == Status.ACKNOWLEDGED else ""
    return f"{what}; {where}; {alert.severity}{status}; since {when(since(alert))}"


def since(alert: Alert):
    """When the problem started: the first bad run if the detector knows it, else the opening."""
    return alert.first_bad_at or alert.opened_at


def badge_class(alert: Alert) -> str:
    acknowledged = " ack" if alert.status == Status.ACKNOWLEDGED else ""
    return f"alert-badge {alert.severity}{acknowledged}"


def detail_url(alert: Alert) -> str:
    return reverse("alerts:detail", args=[alert.id])


def alert_badges(alerts: list[Alert], endpoint_slug: str) -> dict[str, Any]:
    """The leaderboard's alerts cell (in template dashboard/leaderboard.html): the most severe
    badges (the selector sorts them), then how many more, linking to all of them."""
    more = len(alerts) - MAX_BADGES
    return {
        "badges": [
            {
                "id": a.id,
                "css": badge_class(a),
                "url": detail_url(a),
                "title": badge_title(a),
                "text": badge_text(a),
            }
            for a in alerts[:MAX_BADGES]
        ],
        "more": more if more > 0 else 0,
        "more_url": f"{reverse('alerts:list')}?{urlencode({'endpoint': endpoint_slug})}",
    }


def banner_items(alerts: list[Alert], endpoint_label: str) -> list[dict[str, Any]]:
    """The endpoint page's banner: one entry per active alert, most severe first."""
    return [
        {
            "id": a.id,
            "badge": badge_text(a),
            "css": badge_class(a),
            "severity": a.severity,
            "acknowledged": a.status == Status.ACKNOWLEDGED,
            "what": _what(a, endpoint_label),
            "where": f"{a.workload.name} · from {a.vantage.label}" if a.workload else "",
            "since": since(a),
            "url": detail_url(a),
        }
        for a in alerts
    ]


def banner_level(alerts: list[Alert]) -> str:
    """The banner's colour: the worst alert nobody acknowledged yet ('ack' when all were)."""
    waiting = {a.severity for a in alerts if a.status != Status.ACKNOWLEDGED}
    return "major" if "major" in waiting else "minor" if waiting else "ack"


def _what(alert: Alert, endpoint_label: str) -> str:
    if alert.kind == Kind.OUTAGE:
        return badge_title(alert).split(";", 1)[0]
    if alert.metric in UNITS:
        return (
            f"{METRIC_WORDS[alert.metric]} is {percent(alert.shift, 0)} {WORSE[alert.metric]} "
            f"({quantity(alert.baseline_median, alert.metric)} → "
            f"{quantity(alert.recent_median, alert.metric)})"
        )
    return f"{METRIC_WORDS.get(alert.metric, alert.metric)} problem at {endpoint_label}"


def api_alerts(alerts: list[Alert]) -> list[dict[str, Any]]:
    """The leaderboard API's `alerts` per row: enough to badge a row and fetch the rest."""
    return [
        {
            "id": a.id,
            "kind": a.kind,
            "metric": a.metric,
            "severity": a.severity,
            "status": a.status,
            "shift": a.shift,
            "workload": a.workload.slug if a.workload else None,
            "vantage": a.vantage.slug,
            "since": since(a).isoformat(),
        }
        for a in alerts
    ]
