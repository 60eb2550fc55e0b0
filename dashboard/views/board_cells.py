"""Leaderboard cells as display strings, computed once per row in Python; the template
(dashboard/leaderboard.html) only places them, so it stays cheap for 100 endpoints."""

from typing import Any

from benchmarks.selectors.rows import BoardRow

from ..templatetags.dashboard_format import ago, ms, ms_range, pct, tps, tps_range, usd, usd_small

# An error rate at or above this is shown in red.
ERROR_RATE_WARNING = 0.05


def cells(row: BoardRow) -> dict[str, Any]:
    """Display strings (the template escapes them) for one leaderboard row."""
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
        "blended": usd(row.blended_price_per_mtok),
        "cost": usd_small(row.cost_per_request_usd),
        "cost_per_1000": (
            f"{usd(row.cost_per_request_usd * 1000)} per 1,000"
            if row.cost_per_request_usd is not None
            else ""
        ),
        "errors": pct(row.error_rate),
        "errors_bad": (row.error_rate or 0) >= ERROR_RATE_WARNING,
        "last_run": ago(row.last_run_at),
        "last_run_title": f"{row.last_run_at:%Y-%m-%d %H:%M} UTC" if row.last_run_at else "",
        "status_class": row.status.replace(" ", "-"),
    }
