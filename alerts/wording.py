"""Alerts in words: one place that says what a series is and what happened to it."""

from __future__ import annotations

from datetime import UTC, datetime

UNITS = {"decode_tps": "tok/s", "ttft_ms": "ms"}
METRIC_WORDS = {
    "decode_tps": "Decode speed",
    "ttft_ms": "Time to first token",
    "availability": "Availability",
    "probe": "Probe infrastructure",
}
WORSE = {"decode_tps": "slower", "ttft_ms": "higher"}
# Error categories (providers/errors.py) where the category's name alone misleads a reader:
# `unreachable` (refused connection, DNS or TLS failure) is not a slow provider, nothing answered.
ERROR_WORDS = {"unreachable": "could not connect"}


def error_words(category: str) -> str:
    return ERROR_WORDS.get(category, category)


def percent(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    return f"{value * 100:.{digits}f} %"


def quantity(value: float | None, metric: str) -> str:
    """A metric value with its unit: 72.1 tok/s, 640 ms."""
    if value is None:
        return "–"
    unit = UNITS.get(metric, "")
    if metric == "ttft_ms":
        return f"{value:,.0f} {unit}"
    return f"{value:,.1f} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


def runs(n: int) -> str:
    """'1 run', '3 runs'."""
    return f"{n} run" + ("" if n == 1 else "s")


def p_value(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.2g}" if value >= 1e-4 else f"{value:.1e}"


def when(moment: datetime | None) -> str:
    if moment is None:
        return "–"
    return moment.astimezone(UTC).strftime("%d %b %Y %H:%M UTC")


def series_words(alert) -> str:
    """Which series, in a sentence: metric, endpoint, workload, vantage."""
    if alert.kind == "infrastructure":
        return f"Probe at {alert.vantage.label} ({alert.vantage.slug}): all its series together"
    what = METRIC_WORDS.get(alert.metric, alert.metric)
    if alert.metric in UNITS:
        better = "higher is better" if alert.metric == "decode_tps" else "lower is better"
        what = f"{what} ({UNITS[alert.metric]}, {better})"
    return (
        f"{what} of {alert.endpoint.label}, workload “{alert.workload.name}”, "
        f"measured from {alert.vantage.label} ({alert.vantage.slug})"
    )


def headline(alert, kind: str, snapshot: dict | None = None) -> str:
    """One line for a subject or a list: what happened to which endpoint."""
    snap = snapshot if snapshot is not None else {}
    shift = snap.get("shift", alert.shift)
    if alert.kind == "infrastructure":
        share = snap.get("share")
        if kind == "resolved":
            return f"Probe at {alert.vantage.label} is healthy again"
        return (
            f"Probe at {alert.vantage.label}: {percent(share, 0)} of its series got worse at "
            "once (probe infrastructure?)"
        )
    name = alert.endpoint.label
    if alert.kind == "outage":
        rate = snap.get("error_rate", alert.error_rate)
        if kind == "resolved":
            return f"{name} is answering again ({percent(rate, 0)} errors)"
        categories = snap.get("error_categories", alert.error_categories) or {}
        ranked = sorted(categories, key=categories.get, reverse=True)
        named = ", ".join(error_words(category) for category in ranked) or "errors"
        return f"{name} outage: {percent(rate, 0)} of requests failed ({named})"
    metric = METRIC_WORDS[alert.metric]
    worse = WORSE[alert.metric]
    if kind == "resolved":
        return f"{metric} of {name} is back to normal (shift now {percent(shift)})"
    if kind == "new_normal":
        return (
            f"{metric} of {name} stayed at a new level ({percent(shift, 0)} {worse} than "
            "before): closed as the new normal, alerting again against it"
        )
    if kind == "escalated":
        return f"{metric} of {name} got worse: now {percent(shift, 0)} {worse} (major)"
    if snap.get("verdict") == "clear" and snap.get("recovered") is False:
        return f"{metric} of {name} looks back ({percent(shift, 0)} {worse}), not resolved yet"
    arm = snap.get("arm") or ""
    in_slot = next((a["shift"] for a in snap.get("arms", []) if a["name"] == arm), None)
    if arm.startswith("slot ") and in_slot is not None:
        # Found in one time-of-day slot: the day's shift dilutes it three- or four-fold.
        slot = arm.removeprefix("slot ")
        return f"{metric} of {name} is {percent(in_slot, 0)} {worse} in the {slot} slot"
    return f"{metric} of {name} is {percent(shift, 0)} {worse}"


def alert_subject(alert) -> str:
    return headline(alert, "opened")
