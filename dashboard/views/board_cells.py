"""Leaderboard cells built once in Python: a page of 100 endpoints has ~2,800 values, and the
template engine costs far more per value (lookup, filter, auto-escape) than these plain calls.
The markup here is what templates/benchmarks/leaderboard.html showed cell by cell; every
value is HTML-escaped."""

from html import escape
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from benchmarks.selectors.rows import BoardRow

from ..templatetags.dashboard_format import ago, ms, ms_range, pct, tps, tps_range, usd, usd_small

# An error rate at or above this is shown in red.
ERROR_RATE_WARNING = 0.05


def cells(row: BoardRow) -> dict[str, Any]:
    """Display strings (not yet escaped) for one leaderboard row."""
    has_prefill = row.prefill_cost_ms is not None
    return {
        "ttft": ms(row.ttft_p50_ms),
        "ttft_spread": ms_range(row.ttft_p25_ms, row.ttft_p75_ms)
        if row.ttft_p25_ms is not None
        else "",
        "decode": tps(row.decode_tps_p50),
        "decode_spread": (
            tps_range(row.decode_tps_p25, row.decode_tps_p75)
            if row.decode_tps_p25 is not None
            else ""
        ),
        "e2e": ms(row.e2e_p50_ms),
        "e2e_spread": ms_range(row.e2e_p25_ms, row.e2e_p75_ms)
        if row.e2e_p25_ms is not None
        else "",
        "prefill": f"+{ms(row.prefill_cost_ms)}" if has_prefill else "—",
        "prefill_spread": (
            ms_range(row.prefill_cost_p25_ms, row.prefill_cost_p75_ms) if has_prefill else ""
        ),
        "c1": tps(row.decode_tps_c1),
        "c10": tps(row.decode_tps_c10),
        "peak": tps(row.decode_tps_peak),
        "throughput": tps(row.throughput_tps),
        "throughput_at": f"at ×{row.throughput_concurrency}" if row.throughput_concurrency else "",
        "prices": f"{usd(row.price_in_per_mtok)} / {usd(row.price_out_per_mtok)}",
        "cost": usd_small(row.cost_per_request_usd),
        "errors": pct(row.error_rate),
        "errors_bad": (row.error_rate or 0) >= ERROR_RATE_WARNING,
        "last_run": ago(row.last_run_at),
        "last_run_title": f"{row.last_run_at:%Y-%m-%d %H:%M} UTC" if row.last_run_at else "",
        "status_class": row.status.replace(" ", "-"),
    }


def _num(value: str, spread: str | None = None, *, strong: bool = False) -> str:
    """A numeric cell, optionally with its spread underneath."""
    below = f'<span class="spread">{escape(spread)}</span>' if spread is not None else ""
    return f'<td class="num{" strong" if strong else ""}">{escape(value)}{below}</td>'


def row_cells_html(row: BoardRow, endpoint_query: str) -> SafeString:
    """The <td>s of one leaderboard row, from the rank to the status (the alerts column, when
    there is one, follows from the template)."""
    c = cells(row)
    tie = (
        '<span class="tie-mark" title="Tie: spread overlaps the row above">=</span>'
        if row.tie
        else ""
    )
    simulated = ' <span class="badge sim">simulated</span>' if row.simulated else ""
    bad = ' class="bad"' if c["errors_bad"] else ""
    cost_title = (
        ' title="Input tokens estimated from the prompt (not reported by the provider)"'
        if row.input_tokens_estimated
        else ""
    )
    parts = [
        f'<td class="num rank">{tie}{"" if row.rank is None else row.rank}</td>',
        f'<td class="name"><a href="/endpoints/{escape(row.slug)}/{escape(endpoint_query)}">'
        f"{escape(row.label)}</a>"
        f'<span class="sub">{escape(row.provider)}{simulated}</span></td>',
        _num(c["ttft"], c["ttft_spread"]),
        _num(c["decode"], c["decode_spread"], strong=True),
        _num(c["e2e"], c["e2e_spread"]),
        _num(c["prefill"], c["prefill_spread"]),
        _num(c["c1"]),
        _num(c["c10"]),
        _num(c["peak"]),
        _num(c["throughput"], c["throughput_at"]),
        _num(c["prices"]),
        f'<td class="num"{cost_title}>{escape(c["cost"])}</td>',
        f'<td class="num"><span{bad}>'
        f'{escape(c["errors"])}</span><span class="spread">of <span class="c-samples">'
        f"{row.samples}</span> samples</span></td>",
        f'<td><span title="{escape(c["last_run_title"])}">{escape(c["last_run"])}</span></td>',
        f'<td><span class="status s-{escape(c["status_class"])}">{escape(row.status)}</span></td>',
    ]
    # Every interpolated value above went through escape(); the rest is our own markup.
    return mark_safe("\n      ".join(parts))  # noqa: S308
