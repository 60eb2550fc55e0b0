"""Number formatting for the dashboard: ms, tok/s, dollars, percentages, query strings."""

import math
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django import template
from django.utils import timezone
from django.utils.html import format_html

register = template.Library()
DASH = "—"


@register.filter
def ms(value: float | None) -> str:
    """612 ms · 1.24 s · 12.4 s · 124 s."""
    if value is None:
        return DASH
    if abs(value) < 1000:
        return f"{value:.0f} ms"
    seconds = value / 1000
    if abs(seconds) < 10:
        return f"{seconds:.2f} s"
    if abs(seconds) < 100:
        return f"{seconds:.1f} s"
    return f"{seconds:,.0f} s"


@register.filter
def seconds(value: float | None) -> str:
    """Seconds with sensible precision: 0.84 s · 12.3 s · 4 min 10 s."""
    if value is None:
        return DASH
    if value < 10:
        return f"{value:.2f} s"
    if value < 120:
        return f"{value:.1f} s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes} min {rest} s"


@register.filter
def tps(value: float | None) -> str:
    """Tokens per second: 71.3 · 752 · 1,204."""
    if value is None:
        return DASH
    # 99.97 would print as "100.0": switch to whole numbers where one decimal reaches 100.
    return f"{value:.1f}" if abs(value) < 99.95 else f"{value:,.0f}"


@register.filter
def usd(value: float | None) -> str:
    """Prices per 1M tokens: $0.60 · $15.00 · $0.075."""
    if value is None:
        return DASH
    return f"${value:,.2f}" if value >= 0.1 or value == 0 else f"${value:.3f}"


@register.filter
def usd_small(value: float | None) -> str:
    """The cost of one request as money, three significant figures and never in exponent
    notation: $1.24 · $0.0312 · $0.000256."""
    if value is None:
        return DASH
    if value == 0:
        return "$0"
    if value >= 1:
        return f"${value:,.2f}"
    decimals = min(10, 2 - math.floor(math.log10(value)))
    return f"${value:.{decimals}f}"


@register.filter
def pct(value: float | None) -> str:
    """A fraction as a percentage: 0.025 → 2.5 %."""
    if value is None:
        return DASH
    return f"{value * 100:.0f} %" if value >= 0.1 or value == 0 else f"{value * 100:.1f} %"


@register.filter
def tokens(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value / 1000:.1f}k" if value >= 10_000 else f"{value:,.0f}"


@register.simple_tag
def query(params: dict[str, str], **changes: Any) -> str:
    """A query string from `params` with `changes` applied (empty values drop the parameter)."""
    merged = {**params, **{k: "" if v is None else str(v) for k, v in changes.items()}}
    pairs = [(k, v) for k, v in merged.items() if v != ""]
    return "?" + urlencode(pairs) if pairs else "?"


@register.filter
def ms_range(low: float | None, high: float | None) -> str:
    """A spread with one unit: 205–229 ms · 2.77–2.91 s."""
    if low is None or high is None:
        return DASH
    if abs(high) < 1000:
        return f"{low:.0f}–{high:.0f} ms"
    digits = 2 if abs(high) < 10_000 else 1 if abs(high) < 100_000 else 0
    return f"{low / 1000:.{digits}f}–{high / 1000:.{digits}f} s"


@register.filter
def tps_range(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return DASH
    return f"{tps(low)}–{tps(high)}"


@register.filter
def ago(moment: datetime | None) -> str:
    """Compact age: 12 min ago · 6 h ago · 3 d ago."""
    if moment is None:
        return DASH
    minutes = max(0, int((timezone.now() - moment).total_seconds() // 60))
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 48 * 60:
        return f"{minutes // 60} h ago"
    return f"{minutes // (24 * 60)} d ago"


@register.filter
def share(value: float | None) -> str:
    """A fraction with one decimal as a percentage: 0.9949 → 99.5 %."""
    return DASH if value is None else f"{value * 100:.1f} %"


SATURATION_TITLE = (
    "The client read slower than the server wrote in these runs: their ITL tail is withheld and "
    "their decode may read low. They are kept in the medians (docs/design.md §4)."
)


@register.simple_tag
def saturation_mark(saturated: int | None, runs: int | None, short: bool = False) -> str:
    """The mark "client saturated in N of M runs" when any run behind a figure was saturated,
    else ""; short: "sat. N/M" (the whole sentence in its title), for a narrow column."""
    if not saturated:
        return ""
    text = f"client saturated in {saturated} of {runs} run{'' if runs == 1 else 's'}"
    if short:
        return format_html(
            '<span class="spread saturated-note" title="{}: {}">sat. {}/{}</span>',
            text,
            SATURATION_TITLE,
            saturated,
            runs,
        )
    return format_html(
        '<span class="spread saturated-note" title="{}">{}</span>', SATURATION_TITLE, text
    )
