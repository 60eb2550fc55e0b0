"""The agent-loop page's table rows as HTML built in Python (dashboard/agent_loop.html places
them), as dashboard.views.price_html does for the price page: the markup the template's loop
wrote, each value formatted by the same filter and escaped the way the template escapes it."""

from typing import Any

from django.utils.formats import localize
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify

from ..templatetags.dashboard_format import ms, saturation_mark, seconds, tokens, tps, usd_small
from .board_html import endpoint_url, esc

_SIMULATED = ' <span class="badge sim">simulated</span>'


def loop_rows_html(projections: list[dict[str, Any]], tokens_per_call: int) -> SafeString:
    """Every projection's <tr>, each with the whitespace the template's loop gave it."""
    url_of = endpoint_url()
    out_per_call = esc(localize(tokens_per_call))
    rows = []
    for p in projections:
        per_call = (
            f'<span class="spread">{esc(tokens(p["input_tokens_per_call"]))} in + '
            f"{out_per_call} out per call</span>"
            if p["input_tokens_per_call"]
            else ""
        )
        rows.append(
            f'\n    <tr data-slug="{esc(p["slug"])}"><td class="name">'
            f'<a href="{esc(url_of(p["slug"]))}">{esc(p["label"])}</a><span class="sub">'
            f"{esc(p['provider'])}{_SIMULATED if p['simulated'] else ''}</span></td>\n"
            f'      <td class="num strong wall">{esc(seconds(p["wall_s"]))}</td>'
            f'<td class="num cost">{esc(usd_small(p["cost_usd"]))}{per_call}</td>'
            f'<td class="num">{esc(seconds(p["wall_best_s"]))}–'
            f"{esc(seconds(p['wall_worst_s']))}</td>\n"
            f'      <td><span class="verdict v-{esc(slugify(p["verdict"]))}">'
            f"{esc(p['verdict'])}</span></td>\n"
            f'      <td class="num">{esc(seconds(p["waiting_s"]))}</td>'
            f'<td class="num">{esc(seconds(p["decoding_s"]))}</td>'
            f'<td class="num">{esc(seconds(p["tool_total_s"]))}</td>\n'
            f'      <td class="num">{esc(seconds(p["per_call_s"]))}</td>'
            f'<td class="num">{esc(ms(p["ttft_ms"]))}</td>'
            f'<td class="num">{esc(tps(p["decode_tps"]))}'
            f"{esc(saturation_mark(p['saturated_runs'], p['runs']))}</td></tr>\n  "
        )
    return mark_safe("".join(rows))  # noqa: S308 (every value above is escaped)
