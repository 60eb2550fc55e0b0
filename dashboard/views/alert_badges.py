"""Active alerts shown on dashboard pages: compact badges on the leaderboard, a banner on the
endpoint page, a short list per row in the leaderboard API.

Alerts come from alerts.selectors.open_alerts_by_endpoint (one query for any number of
endpoints, workload and vantage joined), so nothing here may touch another relation: the
words are built from the alert's own fields and those two.
"""

from html import escape
from typing import Any

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

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


def alert_cell_html(alerts: list[Alert], endpoint_slug: str) -> SafeString:
    """The leaderboard's alerts <td>: the most severe badges (the selector sorts them), then
    '+N' linking to all of the endpoint's active alerts."""
    badges = [
        f'<a class="{badge_class(a)}" href="{detail_url(a)}" data-alert="{a.id}" '
        f'title="{escape(badge_title(a))}">{escape(badge_text(a))}</a>'
        for a in alerts[:MAX_BADGES]
    ]
    if len(alerts) > MAX_BADGES:
        more = f"{reverse('alerts:list')}?endpoint={escape(endpoint_slug)}"
        badges.append(
            f'<a class="alert-more" href="{more}" title="All active alerts of this endpoint">'
            f"+{len(alerts) - MAX_BADGES}</a>"
        )
    # Every interpolated text went through escape(); ids and reversed URLs are ours.
    return mark_safe(f'<td class="alerts">{"".join(badges)}</td>')  # noqa: S308


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
