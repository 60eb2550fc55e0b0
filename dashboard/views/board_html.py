"""The leaderboard's rows as HTML built in Python (dashboard/leaderboard.html places them):
a hundred rows of sixteen cells cost the template ~40 variable lookups each, several times
what formatting the same markup here costs. The markup is the one the template wrote, cells
escaped the way the template escapes them."""

import re
from collections.abc import Callable
from html import escape
from typing import Any

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from benchmarks.selectors.rows import BoardRow

from ..templatetags.dashboard_format import saturation_mark

_TIE_MARK = '<span class="tie-mark" title="Tie: spread overlaps the row above">=</span>'
_SIMULATED = ' <span class="badge sim">simulated</span>'
_ESTIMATED = ' title="Input tokens estimated from the prompt (not reported by the provider)"'


# A character html.escape replaces (quote=True): text without one is returned as it is.
_SPECIAL = re.compile("[&<>\"']").search


def esc(value: Any) -> str:
    """What django.utils.html.conditional_escape gives (safe markup as it is, anything else
    through html.escape of its text) without its lazy-string wrapper: ~3,000 cells a page,
    most of them figures with nothing to escape (one search instead of html.escape's five
    replacements: ~0.5 ms a page)."""
    if hasattr(value, "__html__"):
        return value.__html__()
    text = str(value)
    return escape(text) if _SPECIAL(text) else text


def endpoint_url() -> Callable[[str], str]:
    """The endpoint page's URL of a slug, reversed once per page (a slug, [-a-zA-Z0-9_]+ by
    its URL pattern, goes into the path as it is, as reverse() puts it)."""
    before, after = reverse("dashboard:endpoint", args=["0"]).rsplit("0", 1)
    return lambda slug: f"{before}{slug}{after}"


def row_html(
    row: BoardRow,
    c: dict[str, Any],
    a: dict[str, Any],
    endpoint_query: str,
    url_of: Callable[[str], str] | None = None,
) -> SafeString:
    """One endpoint's <tr>: `c` its cells (board_cells.cells), `a` its alerts cell
    (alert_badges.alert_badges), `endpoint_query` what its link to the endpoint page keeps,
    `url_of` endpoint_url() (reversed per row without it)."""
    classes = ("tie" if row.tie else "") + ("" if row.runs else " nodata")
    rank = esc("" if row.rank is None else row.rank)
    url = esc((url_of or endpoint_url())(row.slug))
    name = (
        f'<a href="{url}{esc(endpoint_query)}">{esc(row.label)}</a><span class="sub">'
        f"{esc(row.provider)}{_SIMULATED if row.simulated else ''}</span>"
    )
    bad = ' class="bad"' if c["errors_bad"] else ""
    errors = (
        f"<span{bad}>{esc(c['errors'])}</span>"
        f'<span class="spread">of <span class="c-samples">{esc(row.samples)}</span> '
        f"{'sample' if row.samples == 1 else 'samples'}</span>"
    )
    last = (
        f'<span title="{esc(c["last_run_title"])}">{esc(c["last_run"])}</span><span class="sub">'
        f'<span class="status s-{esc(c["status_class"])}">{esc(row.status)}</span></span>'
    )
    cells = [
        ("num rank", "Rank", f"{_TIE_MARK if row.tie else ''}{rank}"),
        ("name", None, name),
        ("num c-ttft", "TTFT p50", _spread(c["ttft"], c["ttft_spread"])),
        (
            "num strong c-decode",
            "Decode tok/s",
            _spread(c["decode"], c["decode_spread"])
            + saturation_mark(row.saturated_runs, row.runs),
        ),
        ("num", "E2E p50", _spread(c["e2e"], c["e2e_spread"])),
        ("num", "Prefill cost", _spread(c["prefill"], c["prefill_spread"])),
        (
            "num",
            "Decode @1",
            esc(c["c1"]) + saturation_mark(row.saturated_runs_c1, row.runs_c1, short=True),
        ),
        (
            "num",
            "Decode @10",
            esc(c["c10"]) + saturation_mark(row.saturated_runs_c10, row.runs_c10, short=True),
        ),
        (
            "num",
            "Decode @peak",
            esc(c["peak"]) + saturation_mark(row.saturated_runs_peak, row.runs_peak, short=True),
        ),
        ("num", "Aggregate tok/s", _spread(c["throughput"], c["throughput_at"])),
        ("num c-prices", "In / out per 1M", esc(c["prices"])),
        ("num c-blended", "Blended 3:1 per 1M", esc(c["blended"])),
    ]
    cost = _spread(c["cost"], c["cost_per_1000"])
    estimated = _ESTIMATED if row.input_tokens_estimated else ""
    lines = [f'<tr data-slug="{esc(row.slug)}" class="{classes}">']
    lines += [_td(css, label, html) for css, label, html in cells]
    lines.append(f'  <td class="num c-cost" data-label="Per request"{estimated}>{cost}</td>')
    lines.append(_td("num", "Errors", errors))
    lines.append(_td("c-last", "Last run · status", last))
    lines.append(_td("alerts", "Alerts", _alerts(a)))
    lines.append("</tr>")
    return mark_safe("\n".join(lines))  # noqa: S308 (every value above is escaped)


def _td(css: str, label: str | None, html: str) -> str:
    labelled = f' data-label="{label}"' if label else ""
    return f'  <td class="{css}"{labelled}>{html}</td>'


def _spread(value: str, spread: str) -> str:
    return f'{esc(value)}<span class="spread">{esc(spread)}</span>'


def _alerts(a: dict[str, Any]) -> str:
    badges = "".join(
        f'<a class="{esc(b["css"])}" href="{esc(b["url"])}" data-alert="{esc(b["id"])}" '
        f'title="{esc(b["title"])}">{esc(b["text"])}</a>'
        for b in a["badges"]
    )
    if a["more"]:
        badges += (
            f'<a class="alert-more" href="{esc(a["more_url"])}" '
            f'title="All active alerts of this endpoint">+{esc(a["more"])}</a>'
        )
    return badges
