"""The monthly report in short, for a channel post: the winners per workload, the endpoints that
got slower than the month before, the alerts of the month and how they ended, the changes of
advice, and a link to the page. Every figure is the report's own (report.py), worded by
tables.py; workloads by name only, never their text.

"Slower" uses the spread the report shows: this month's decode median below the month before's
p25, or its TTFT median above the month before's p75 (outside last month's middle half on the
slow side), so a month that moved within last month's own spread is not called slower.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import tables
from .report import AlertLine, EndpointMonth, MonthlyReport, Winners

SHOWN = 5  # lines per section (the rest are on the page): four sections fit Slack's 3,000


@dataclass(frozen=True, slots=True)
class Slower:
    endpoint: EndpointMonth
    decode: bool  # decode median below the month before's p25
    ttft: bool  # TTFT median above the month before's p75


def slower(report: MonthlyReport) -> list[Slower]:
    found = []
    for e in report.endpoints:
        now, before = e.month, e.before
        decode = None not in (now.decode_tps_p50, before.decode_tps_p25) and (
            now.decode_tps_p50 < before.decode_tps_p25
        )
        ttft = None not in (now.ttft_p50_ms, before.ttft_p75_ms) and (
            now.ttft_p50_ms > before.ttft_p75_ms
        )
        if decode or ttft:
            found.append(Slower(e, decode=bool(decode), ttft=bool(ttft)))
    return found


def title(report: MonthlyReport) -> str:
    return f"tokspeed monthly report, {report.month.label}"


def _winner(w: Winners) -> str:
    _, decode, ttft = tables.winner_cells(w)
    return f"- {w.scope}: fastest decode {decode}; fastest first token {ttft}"


def _slower(s: Slower) -> str:
    e, parts = s.endpoint, []
    if s.decode:
        parts.append(
            f"decode {tables.tps(e.month.decode_tps_p50)} from "
            f"{tables.tps(e.before.decode_tps_p50)}{tables.changed(e.decode_change)}"
        )
    if s.ttft:
        parts.append(
            f"first token {tables.ms(e.month.ttft_p50_ms)} from "
            f"{tables.ms(e.before.ttft_p50_ms)}{tables.changed(e.ttft_change)}"
        )
    return f"- {e.name}: {', '.join(parts)}"


def _alert(a: AlertLine) -> str:
    workload = f", {a.workload}" if a.workload else ""
    return f"- #{a.id} {a.what}, {a.endpoint}{workload} ({a.severity}): {a.ended}"


def _section(heading: str, lines: list[str], empty: str) -> list[str]:
    shown = lines[:SHOWN] or [empty]
    if len(lines) > SHOWN:
        shown.append(f"… {len(lines) - SHOWN} more in the report")
    return ["", f"**{heading}**", *shown]


def markdown(report: MonthlyReport, url: str) -> str:
    """The post's body: the link to the page (and its CSV) first, so no service's length limit
    can cut it off, then short sections."""
    link = f"[The full report, with its CSV]({url})"
    if not report.has_data:
        lines = [f"There is no data for {report.month.label}. {link}"]
    else:
        lines = [f"{report.month.label} against the month before ({report.vantage}): {link}."]
        lines += _section(
            "Winners per workload", [_winner(w) for w in report.workloads], "(no runs)"
        )
        lines += _section(
            "Slower than the month before", [_slower(s) for s in slower(report)], "(none)"
        )
        lines += _section(
            f"Alerts of the month ({len(report.alerts)})",
            [_alert(a) for a in report.alerts],
            "(none)",
        )
        if report.advice:
            changes = [f"- {c.profile}: {c.before} → {c.after}" for c in report.advice]
            lines += _section("The advice changed", changes, "")
    return "\n".join(lines)


def document(report: MonthlyReport, url: str) -> dict[str, Any]:
    """The webhook's JSON: the same facts, as data (figures in ms and tok/s)."""
    return {
        "month": report.month.slug,
        "url": url,
        "winners": [
            {
                "workload": w.scope,
                "decode": list(w.decode),
                "decode_tps": w.decode_tps,
                "ttft": list(w.ttft),
                "ttft_ms": w.ttft_ms,
            }
            for w in report.workloads
        ],
        "slower": [
            {
                "endpoint": s.endpoint.slug,
                "label": s.endpoint.label,
                "decode_tps": [s.endpoint.before.decode_tps_p50, s.endpoint.month.decode_tps_p50],
                "ttft_ms": [s.endpoint.before.ttft_p50_ms, s.endpoint.month.ttft_p50_ms],
                "decode_slower": s.decode,
                "ttft_slower": s.ttft,
            }
            for s in slower(report)
        ],
        "alerts": [
            {
                "id": a.id,
                "what": a.what,
                "endpoint": a.endpoint,
                "workload": a.workload,
                "severity": a.severity,
                "ended": a.ended,
            }
            for a in report.alerts
        ],
        "advice": [
            {"profile": c.profile, "before": c.before, "after": c.after} for c in report.advice
        ],
    }
