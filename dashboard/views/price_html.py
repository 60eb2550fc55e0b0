"""The price page's table rows as HTML built in Python (dashboard/price.html places them): a
hundred rows through the template cost ~4 ms of lookups and filters, several times what the
same markup costs here. The markup is the one the template wrote, each cell escaped the way the
template escapes it (dashboard.views.board_html.esc)."""

from collections.abc import Collection
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from ..templatetags.dashboard_format import ms, saturation_mark, tps, usd, usd_small
from .board_html import endpoint_url, esc

_SIMULATED = ' <span class="badge sim">simulated</span>'
_ON_FRONTIER = '<span class="status s-ok">on the frontier</span>'


def price_rows_html(points: list[dict[str, Any]], frontier: Collection[str]) -> SafeString:
    """Every point's <tr>, each with the whitespace the template's loop gave it."""
    url_of = endpoint_url()
    return mark_safe(  # noqa: S308 (every value below is escaped)
        "".join(
            f'\n    <tr data-slug="{esc(p["slug"])}"><td class="name">'
            f'<a href="{esc(url_of(p["slug"]))}">{esc(p["label"])}</a><span class="sub">'
            f"{esc(p['provider'])}{_SIMULATED if p['simulated'] else ''}</span></td>\n"
            f'      <td class="num" data-label="Out /1M">{esc(usd(p["price_out"]))}</td>'
            f'<td class="num" data-label="In /1M">{esc(usd(p["price_in"]))}</td>'
            f'<td class="num" data-label="Per request">{esc(usd_small(p["cost"]))}</td>\n'
            f'      <td class="num" data-label="TTFT p50">{esc(ms(p["ttft_p50_ms"]))}</td>'
            f'<td class="num" data-label="Decode tok/s">{esc(tps(p["decode_tps_p50"]))}'
            f"{esc(saturation_mark(p['saturated_runs'], p['runs']))}</td>\n"
            f'      <td class="frontier">{_ON_FRONTIER if p["slug"] in frontier else ""}</td>'
            "</tr>\n  "
            for p in points
        )
    )
